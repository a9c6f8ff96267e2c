import { type AnyElysia, Elysia } from "elysia";
import type { AuthCore } from "./auth-core.ts";
import { AUTHORIZATION_HEADER, TENANT_HEADER } from "./auth-headers.ts";
import type { Caller } from "./caller.ts";
import { AuthError } from "./errors.ts";
import type { Operation } from "./policy.ts";
import { markGuard, type RouteTable, unguardedRoutes } from "./route-coverage.ts";
import { type AuthErrorBody, authErrorResponse } from "./transport-errors.ts";

export interface BearerAuthOptions {
  /** `"<METHOD> <route pattern>"` → operation, e.g. `{ "POST /v2/audit/events": "audit.list" }`. */
  operations: Readonly<Record<string, Operation>>;
  /** Routes served without auth (`"GET /health/ready"`); every other route must be in `operations` or gets 403. */
  publicRoutes?: readonly string[];
}

/** Answer to every request of an app that has a non-public route the guard does not cover. */
function misconfiguredResponse(): Response {
  const body: AuthErrorBody = {
    error: { code: "AUTH_CONFIG_INVALID", message: "a route is registered before the auth plugin" },
  };
  return Response.json(body, { status: 500 });
}

/**
 * Refuses every request of `app` (500 `AUTH_CONFIG_INVALID`, logged once) while a non-public route of it is not
 * covered by the guard. `onRequest` runs for every request whatever the registration order, unlike the guard, so a
 * route registered before `.use(bearerAuth(...))` can never be served without auth. Re-checked when routes are added.
 */
function refuseWhileUnguarded(core: AuthCore, app: RouteTable, publicRoutes: ReadonlySet<string>) {
  let checkedCount = -1;
  let unguarded: string[] = [];
  return () => {
    if (app.routes.length !== checkedCount) {
      checkedCount = app.routes.length;
      unguarded = unguardedRoutes(app, publicRoutes);
      if (unguarded.length > 0) {
        core.logger.error(
          { code: "AUTH_CONFIG_INVALID", routes: unguarded },
          "auth: routes registered before bearerAuth; refusing every request",
        );
      }
    }
    return unguarded.length > 0 ? misconfiguredResponse() : undefined;
  };
}

/**
 * Elysia adapter: resolves `caller` into the context of every route of the app it is used in. Refusals answer
 * 401 (+ `WWW-Authenticate: Bearer error="invalid_token"`), 403 or 503 with `{ error: { code, message } }`.
 * A route that is neither public nor mapped to an operation is refused (fail closed). Use it before registering
 * routes: while the app has a non-public route registered before `.use(bearerAuth(...))` (which Elysia would run
 * without the guard), every request of the app is answered 500 `AUTH_CONFIG_INVALID`. Services should also call
 * `assertRoutesCovered(app, options)` once their routes are registered, to fail at start-up instead.
 */
export function bearerAuth(core: AuthCore, options: BearerAuthOptions) {
  const publicRoutes = new Set(options.publicRoutes ?? []);
  const guard = markGuard(
    async ({
      request,
      route,
      headers,
    }: {
      request: Request;
      route: string;
      headers: Record<string, string | undefined>;
    }): Promise<{ caller: Caller | undefined }> => {
      const key = `${request.method} ${route}`;
      if (publicRoutes.has(key)) return { caller: undefined };
      const operation = options.operations[key];
      if (!operation) {
        const error = new AuthError("AUTH_PERMISSION_DENIED", `no operation mapped for route ${key}`);
        core.logger.warn({ code: error.code, route: key }, "auth: request refused");
        throw error;
      }
      // a repeated HTTP header arrives joined with ", "; the core refuses that (auth-headers.ts)
      const caller = await core.check(
        { authorization: headers[AUTHORIZATION_HEADER], tenantId: headers[TENANT_HEADER] },
        operation,
      );
      return { caller };
    },
  );
  const plugin = new Elysia({ name: "svc-bearer-auth" })
    .error({ AuthError })
    .onError({ as: "global" }, ({ error }) => (error instanceof AuthError ? authErrorResponse(error) : undefined))
    .resolve({ as: "global" }, guard);
  // A function plugin receives the app it is used in, so the order check can read that app's routes. Elysia types
  // the result by the returned instance; the app returned carries the plugin's hooks, hence the cast.
  return (app: AnyElysia) =>
    app.onRequest(refuseWhileUnguarded(core, app, publicRoutes)).use(plugin) as unknown as typeof plugin;
}
