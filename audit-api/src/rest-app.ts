import { type AuthCore, assertRoutesCovered, bearerAuth } from "@svc/auth";
import { type HealthState, healthRoutes } from "@svc/health";
import { Elysia } from "elysia";
import type { AuditQueries } from "./audit-queries.ts";
import type { QueryLimits } from "./config.ts";
import { AuditApiError, invalidArgument } from "./errors.ts";
import { parseListRequest } from "./query-request.ts";
import { tenantOf } from "./tenant-of.ts";
import { errorResponse } from "./transport-errors.ts";

const AUTH_OPTIONS = {
  operations: { "POST /v2/audit/events": "audit.list" },
  publicRoutes: ["GET /health", "GET /health/ready", "GET /health/pod-ready", "GET /health/whoami"],
} as const;

/**
 * REST: `POST /v2/audit/events` (spec: Endpoints → Audit service) with body `start_time`, `end_time`,
 * `page_size`, `page_token` and the optional filters; answers `{ total_count, events, next_page_token }`.
 */
export function restApp(auth: AuthCore, queries: AuditQueries, limits: QueryLimits, health: HealthState) {
  const app = new Elysia()
    .use(bearerAuth(auth, AUTH_OPTIONS))
    .use(healthRoutes(health))
    .onError(({ error, code }) => {
      if (error instanceof AuditApiError) return errorResponse(error);
      if (code === "PARSE") return errorResponse(invalidArgument("body", "not a JSON object"));
      return undefined;
    })
    .post("/v2/audit/events", async ({ body, caller }) => {
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw invalidArgument("body", "must be a JSON object");
      }
      const tenantId = tenantOf(caller);
      const answer = await queries.list(tenantId, parseListRequest(body as Record<string, unknown>, limits));
      return { total_count: answer.totalCount, events: answer.events, next_page_token: answer.nextPageToken };
    });
  assertRoutesCovered(app, AUTH_OPTIONS);
  return app;
}
