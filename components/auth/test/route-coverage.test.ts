import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { Elysia } from "elysia";
import { AuthConfigError, assertRoutesCovered, bearerAuth, createAuthCore, parseAuthConfig } from "../index.ts";
import { ROUTE_OPTIONS as OPTIONS } from "./support/routes.ts";
import { captureLogger, DISABLED_ENV } from "./support/test-issuer.ts";

// the check reads only the app's routes, so a core with auth disabled is enough here
const core = createAuthCore({ config: parseAuthConfig(DISABLED_ENV), ...captureLogger() });

test("passes for a covered app; names an early, an unmapped or a stale route", () => {
  const covered = new Elysia()
    .use(bearerAuth(core, OPTIONS))
    .get("/health/ready", () => "ok")
    .post("/v2/audit/events", () => "ok")
    .get("/admin/keys", () => "ok");
  expect(assertRoutesCovered(covered, OPTIONS)).toBeUndefined();

  const early = new Elysia()
    .get("/admin/keys", () => "leak")
    .use(bearerAuth(core, OPTIONS))
    .get("/health/ready", () => "ok")
    .post("/v2/audit/events", () => "ok");
  const earlyError = thrownBy(() => assertRoutesCovered(early, OPTIONS), AuthConfigError);
  expect(earlyError.code).toBe("AUTH_CONFIG_INVALID");
  expect(earlyError.subject).toBe("GET /admin/keys");

  const unmappedApp = new Elysia()
    .use(bearerAuth(core, OPTIONS))
    .get("/health/ready", () => "ok")
    .post("/v2/audit/events", () => "ok")
    .get("/admin/keys", () => "ok")
    .get("/admin/unmapped", () => "ok");
  const unmapped = thrownBy(() => assertRoutesCovered(unmappedApp, OPTIONS), AuthConfigError);
  expect(unmapped.code).toBe("AUTH_CONFIG_INVALID");
  expect(unmapped.subject).toBe("GET /admin/unmapped");

  const stale = new Elysia()
    .use(bearerAuth(core, OPTIONS))
    .get("/health/ready", () => "ok")
    .get("/admin/keys", () => "ok");
  expect(thrownBy(() => assertRoutesCovered(stale, OPTIONS), AuthConfigError).subject).toBe("POST /v2/audit/events");
});

test("a public route registered before .use(bearerAuth) is not a gap", () => {
  const publicFirst = new Elysia()
    .get("/health/ready", () => "ok")
    .use(bearerAuth(core, OPTIONS))
    .post("/v2/audit/events", () => "ok")
    .get("/admin/keys", () => "ok");
  expect(assertRoutesCovered(publicFirst, OPTIONS)).toBeUndefined();
});
