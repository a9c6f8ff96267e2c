import { Metadata } from "@grpc/grpc-js";
import { type AuthCore, bearerAuth } from "@svc/auth";
import { callUnary } from "@svc/component-runtime";
import type { BackendServiceClient } from "@svc/proto";
import { Elysia } from "elysia";
import type { ComponentRoute } from "./component-route.ts";
import { type ClientPool, routeCall } from "./route-call.ts";

export interface AdminAppOptions {
  auth: AuthCore;
  /** What `/admin/services` answers: the observed state of every component. */
  services: () => Record<string, unknown>;
  backend: { route: ComponentRoute; pool: ClientPool<BackendServiceClient> };
  callTimeoutMs: number;
}

/**
 * The operational paths (spec: Other interfaces): `/admin/services` with the security token, `/admin/indexes` with
 * the ops token (`@svc/auth` policy rows `admin.services`, `admin.indexes`); any other path is refused (fail closed).
 * `/admin/indexes` asks the backend leader, so it answers 503 during a backend failover.
 */
export function adminApp(options: AdminAppOptions) {
  return new Elysia({ name: "endpoint-admin" })
    .use(
      bearerAuth(options.auth, {
        operations: { "GET /admin/services": "admin.services", "GET /admin/indexes": "admin.indexes" },
      }),
    )
    .get("/admin/services", () => ({ services: options.services() }))
    .get("/admin/indexes", async ({ set }) => {
      try {
        const answer = await routeCall(options.backend.route, options.backend.pool, (c) =>
          callUnary(c.listIndexes.bind(c), {}, new Metadata(), options.callTimeoutMs),
        );
        return { indexes: answer.indexes };
      } catch (error) {
        set.status = 503;
        return { error: "backend unavailable", detail: (error as Error).message };
      }
    });
}
