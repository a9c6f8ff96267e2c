import type { BearerAuthOptions } from "../../index.ts";

/** The route map the Elysia adapter's tests protect: two mapped routes and one public health route. */
export const ROUTE_OPTIONS: BearerAuthOptions = {
  operations: { "POST /v2/audit/events": "audit.list", "GET /admin/keys": "admin.keys" },
  publicRoutes: ["GET /health/ready"],
};
