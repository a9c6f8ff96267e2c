import { afterAll, beforeAll, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { AuthError, createAuthCore, parseAuthConfig } from "../index.ts";
import { captureLogger, fakeClock, mint, startTestIssuer, type TestIssuer, testConfig } from "./support/test-issuer.ts";

let idp: TestIssuer;
beforeAll(async () => {
  idp = await startTestIssuer();
});
afterAll(() => idp.stop());

const refusal = (promise: Promise<unknown>) => rejectionOf(promise, AuthError);

test("x-tenant-id of another tenant → AUTH_TENANT_MISMATCH (permission-denied)", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const error = await refusal(core.authenticate({ authorization: `Bearer ${await mint(idp)}`, tenantId: "tenant-b" }));
  expect(error).toBeInstanceOf(AuthError);
  expect(error.code).toBe("AUTH_TENANT_MISMATCH");
  expect(error.kind).toBe("permission-denied");
});

test("missing or blank x-tenant-id → AUTH_TENANT_HEADER_MISSING", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp);
  for (const tenantId of [undefined, null, "", "  "]) {
    const error = await refusal(core.authenticate({ authorization: `Bearer ${token}`, tenantId }));
    expect(error.code).toBe("AUTH_TENANT_HEADER_MISSING");
    expect(error.kind).toBe("permission-denied");
  }
});

test("a bad token is refused before the tenant is looked at (401 beats 403)", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  expect((await refusal(core.authenticate({ authorization: undefined, tenantId: undefined }))).code).toBe(
    "AUTH_TOKEN_MISSING",
  );
});

test("check = authenticate + authorize", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp, { claims: { realm_access: { roles: ["app"] } } });
  const request = { authorization: `Bearer ${token}`, tenantId: "tenant-a" };
  expect((await core.check(request, "endpoint.grpc")).roles).toEqual(["app"]);
  expect((await refusal(core.check(request, "admin.keys"))).code).toBe("AUTH_PERMISSION_DENIED");
});

test("refusals are logged as JSON with code and reason, and the token never appears in the log", async () => {
  const capture = captureLogger();
  const core = createAuthCore({ config: testConfig(idp), logger: capture.logger });
  const good = await mint(idp, { claims: { realm_access: { roles: ["app"] } } });
  const wrongAudience = await mint(idp, { claims: { aud: "other" } });
  await refusal(core.check({ authorization: `Bearer ${good}`, tenantId: "tenant-a" }, "admin.keys"));
  await refusal(core.check({ authorization: `Bearer ${good}`, tenantId: "tenant-z" }, "endpoint.grpc"));
  await refusal(core.authenticate({ authorization: `Bearer ${wrongAudience}`, tenantId: "tenant-a" }));
  const entries = capture.lines.map((line) => JSON.parse(line) as { code?: string; reason?: string; msg: string });
  expect(entries.filter((e) => e.msg === "auth: request refused").map((e) => e.code)).toEqual([
    "AUTH_PERMISSION_DENIED",
    "AUTH_TENANT_MISMATCH",
    "AUTH_AUDIENCE_MISMATCH",
  ]);
  expect(entries.find((e) => e.code === "AUTH_AUDIENCE_MISMATCH")?.reason).toContain("audience mismatch");
  for (const token of [good, wrongAudience]) {
    expect(capture.text()).not.toContain(token);
    for (const part of token.split(".")) expect(capture.text()).not.toContain(part);
  }
});

test("a cache hit skips signature verification; the cached caller still gets the tenant check", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp);
  for (let i = 0; i < 5; i++) await core.authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" });
  expect(core.stats()).toMatchObject({ signatureVerifications: 1, cacheHits: 4, cacheSize: 1 });
  const error = await refusal(core.authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-b" }));
  expect(error.code).toBe("AUTH_TENANT_MISMATCH");
});

test("a refused token is not cached", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp, { claims: { aud: "other" } });
  for (let i = 0; i < 3; i++) {
    await refusal(core.authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" }));
  }
  expect(core.stats()).toMatchObject({ signatureVerifications: 3, cacheHits: 0, cacheSize: 0 });
});

test("an expired cached token is not served from the cache (fake clock)", async () => {
  const clock = fakeClock();
  const core = createAuthCore({
    config: testConfig(idp, { SVC_AUTH_CLOCK_TOLERANCE_SECONDS: "0" }),
    now: clock.now,
    ...captureLogger(),
  });
  const token = await mint(idp, { nowSeconds: Math.floor(clock.now() / 1000), ttlSeconds: 60 });
  const request = { authorization: `Bearer ${token}`, tenantId: "tenant-a" };
  await core.authenticate(request);
  clock.advance(30_000);
  await core.authenticate(request);
  expect(core.stats()).toMatchObject({ signatureVerifications: 1, cacheHits: 1 });
  clock.advance(31_000);
  expect((await refusal(core.authenticate(request))).code).toBe("AUTH_TOKEN_EXPIRED");
  expect(core.stats()).toMatchObject({ signatureVerifications: 2, cacheHits: 1, cacheSize: 0 });
});

test("a token still inside the clock tolerance after exp is verified again, never served from cache", async () => {
  const clock = fakeClock();
  const core = createAuthCore({ config: testConfig(idp), now: clock.now, ...captureLogger() });
  const token = await mint(idp, { nowSeconds: Math.floor(clock.now() / 1000), ttlSeconds: 10 });
  const request = { authorization: `Bearer ${token}`, tenantId: "tenant-a" };
  await core.authenticate(request);
  clock.advance(15_000); // past exp, inside the 30 s tolerance
  await core.authenticate(request);
  await core.authenticate(request);
  expect(core.stats()).toMatchObject({ signatureVerifications: 3, cacheHits: 0 });
});

test("the cache bound is respected (SVC_AUTH_CACHE_MAX_ENTRIES)", async () => {
  const core = createAuthCore({ config: testConfig(idp, { SVC_AUTH_CACHE_MAX_ENTRIES: "3" }), ...captureLogger() });
  const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => mint(idp, { claims: { jti: `t${i}` } })));
  for (const token of tokens) await core.authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" });
  expect(core.stats()).toMatchObject({ cacheSize: 3, signatureVerifications: 6 });
  // the oldest was evicted, the newest is still cached
  await core.authenticate({ authorization: `Bearer ${tokens[0]}`, tenantId: "tenant-a" });
  await core.authenticate({ authorization: `Bearer ${tokens[5]}`, tenantId: "tenant-a" });
  expect(core.stats()).toMatchObject({ cacheSize: 3, signatureVerifications: 7, cacheHits: 1 });
});

test("auth disabled: no token needed, anonymous caller of the x-tenant-id, warning logged at start", async () => {
  const capture = captureLogger();
  const core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_DISABLED: "true" }), logger: capture.logger });
  const warning = JSON.parse(String(capture.lines[0])) as { level: number; msg: string };
  expect(warning.level).toBe(40);
  expect(warning.msg).toContain("DISABLED");
  const caller = await core.check({ authorization: undefined, tenantId: "tenant-q" }, "admin.keys");
  expect(caller).toEqual({
    kind: "anonymous",
    principalId: "anonymous",
    tenantId: "tenant-q",
    roles: [],
    scopes: [],
    subject: undefined,
    tokenExpiresAt: null,
  });
  expect((await refusal(core.authenticate({ authorization: undefined, tenantId: undefined }))).code).toBe(
    "AUTH_TENANT_HEADER_MISSING",
  );
});

test("auth enabled by default: no warning, and a missing token is refused", async () => {
  const capture = captureLogger();
  const core = createAuthCore({ config: testConfig(idp), logger: capture.logger });
  expect(capture.lines).toEqual([]);
  expect((await refusal(core.authenticate({ authorization: undefined, tenantId: "tenant-a" }))).code).toBe(
    "AUTH_TOKEN_MISSING",
  );
});
