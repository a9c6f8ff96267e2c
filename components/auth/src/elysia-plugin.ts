import { Elysia } from "elysia";
import { type AuthCore, TENANT_HEADER } from "./auth-core.ts";
import type { Caller } from "./caller.ts";
import { AuthError } from "./errors.ts";
import type { Operation } from "./policy.ts";
import { authErrorResponse } from "./transport-errors.ts";

export interface BearerAuthOptions {
  /** `"<METHOD> <route pattern>"` → operation, e.g. `{ "POST /v2/audit/events": "audit.list" }`. */
  operations: Readonly<Record<string, Operation>>;
  /** Routes served without auth (`"GET /health/ready"`); every other route must be in `operations` or gets 403. */
  publicRoutes?: readonly string[];
}

/**
 * Elysia adapter: resolves `caller` into the context of every route of the app it is used in. Refusals answer
 * 401 (+ `WWW-Authenticate: Bearer error="invalid_token"`), 403 or 503 with `{ error: { code, message } }`.
 * A route that is neither public nor mapped to an operation is refused (fail closed).
 */
export function bearerAuth(core: AuthCore, options: BearerAuthOptions) {
  const publicRoutes = new Set(options.publicRoutes ?? []);
  return new Elysia({ name: "svc-bearer-auth" })
    .error({ AuthError })
    .onError({ as: "global" }, ({ error }) => (error instanceof AuthError ? authErrorResponse(error) : undefined))
    .resolve({ as: "global" }, async ({ request, route, headers }): Promise<{ caller: Caller | undefined }> => {
      const key = `${request.method} ${route}`;
      if (publicRoutes.has(key)) return { caller: undefined };
      const operation = options.operations[key];
      if (!operation) {
        const error = new AuthError("AUTH_PERMISSION_DENIED", `no operation mapped for route ${key}`);
        core.logger.warn({ code: error.code, route: key }, "auth: request refused");
        throw error;
      }
      const caller = await core.check(
        { authorization: headers.authorization, tenantId: headers[TENANT_HEADER] },
        operation,
      );
      return { caller };
    });
}
