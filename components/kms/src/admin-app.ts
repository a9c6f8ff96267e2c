import { type AuthCore, assertRoutesCovered, bearerAuth } from "@svc/auth";
import type { MetricsSource } from "@svc/common";
import { type HealthState, healthRoutes } from "@svc/health";
import { Elysia } from "elysia";
import { httpStatusOf, KmsError } from "./errors.ts";
import { keyMetadataJson } from "./key-metadata.ts";
import type { KeyService } from "./key-service.ts";

const AUTH_OPTIONS = {
  operations: { "GET /admin/keys": "admin.keys" },
  publicRoutes: ["GET /health", "GET /health/ready", "GET /health/pod-ready", "GET /health/whoami", "GET /metrics"],
} as const;

/**
 * The KMS's HTTP side: `GET /admin/keys` (spec: the ops token; policy row `admin.keys`) lists the metadata of the
 * caller tenant's keys — never material — the health routes (`/health/ready` is 503 while sealed) and `/metrics`
 * (the gRPC calls by method and final status code; no key names, tenants or callers).
 */
export function adminApp(auth: AuthCore, keys: KeyService, health: HealthState, metrics: MetricsSource) {
  const app = new Elysia()
    .use(bearerAuth(auth, AUTH_OPTIONS))
    .use(healthRoutes(health, undefined, metrics))
    .onError(({ error }) => {
      if (!(error instanceof KmsError)) return undefined;
      return Response.json({ error: { code: error.code, message: error.message } }, { status: httpStatusOf(error) });
    })
    .get("/admin/keys", async ({ caller }) => {
      const tenant = caller?.tenantId ?? "";
      return { tenant_id: tenant, keys: (await keys.list(tenant)).map(keyMetadataJson) };
    });
  assertRoutesCovered(app, AUTH_OPTIONS);
  return app;
}
