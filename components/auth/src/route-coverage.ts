import { AuthConfigError } from "./errors.ts";
import type { Operation } from "./policy.ts";

/**
 * Route coverage of the Elysia adapter. Elysia attaches a plugin's hooks only to routes registered after `.use()`,
 * so a route registered before `.use(bearerAuth(...))` would run without auth. The guard functions of `bearerAuth`
 * are recorded here, and a route counts as guarded when its `beforeHandle` hooks hold one of them.
 */

/** What the check reads of an Elysia app: `app.routes` (method, path pattern and the hooks attached to the route). */
export interface RouteTable {
  readonly routes: ReadonlyArray<{ method: string; path: string; hooks?: { beforeHandle?: unknown } }>;
}

export interface RouteCoverageOptions {
  operations: Readonly<Record<string, Operation>>;
  publicRoutes?: readonly string[];
}

const guards = new WeakSet<object>();

/** Records `fn` as a `bearerAuth` guard (the resolve hook that checks every non-public route). */
export function markGuard<F extends object>(fn: F): F {
  guards.add(fn);
  return fn;
}

function isGuarded(hooks: { beforeHandle?: unknown } | undefined): boolean {
  const before = hooks?.beforeHandle;
  const list: unknown[] = Array.isArray(before) ? before : before === undefined ? [] : [before];
  return list.some((hook) => {
    const fn = typeof hook === "object" && hook !== null && "fn" in hook ? hook.fn : hook;
    return typeof fn === "function" && guards.has(fn);
  });
}

const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

/** Non-public routes of `app` that no `bearerAuth` guard covers, as `"<METHOD> <path>"`. */
export function unguardedRoutes(app: RouteTable, publicRoutes: ReadonlySet<string>): string[] {
  return app.routes.filter((route) => !publicRoutes.has(routeKey(route)) && !isGuarded(route.hooks)).map(routeKey);
}

/**
 * Start-up check, to call once every route is registered: throws `AuthConfigError` (`AUTH_CONFIG_INVALID`, `field`
 * = the first route at fault) when a non-public route is not guarded (registered before `.use(bearerAuth(...))`) or
 * has no operation in the map, or when an `operations` / `publicRoutes` entry names no route of the app.
 */
export function assertRoutesCovered(app: RouteTable, options: RouteCoverageOptions): void {
  const publicRoutes = new Set(options.publicRoutes ?? []);
  const gaps: { route: string; problem: string }[] = [];
  for (const route of unguardedRoutes(app, publicRoutes)) {
    gaps.push({ route, problem: "registered before .use(bearerAuth(...)), so it runs without auth" });
  }
  const keys = new Set(app.routes.map(routeKey));
  for (const route of keys) {
    if (!publicRoutes.has(route) && !Object.hasOwn(options.operations, route)) {
      gaps.push({ route, problem: "neither public nor mapped to an operation" });
    }
  }
  for (const route of [...Object.keys(options.operations), ...publicRoutes]) {
    if (!keys.has(route)) gaps.push({ route, problem: "names no route of the app" });
  }
  const first = gaps[0];
  if (first) {
    const list = gaps.map(({ route, problem }) => `${route}: ${problem}`).join("; ");
    throw new AuthConfigError(first.route, `${gaps.length} route coverage gap(s): ${list}`);
  }
}
