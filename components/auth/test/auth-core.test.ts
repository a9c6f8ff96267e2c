import { afterAll, beforeAll, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { type AuthCore, AuthError, createAuthCore, parseAuthConfig } from "../index.ts";
import {
  captureLogger,
  DISABLED_ENV,
  fakeClock,
  mint,
  startTestIssuer,
  type TestIssuer,
  testConfig,
} from "./support/test-issuer.ts";

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
  // The token was verified: the refusal names its caller (an audit of the attempt records who tried).
  expect(error.caller?.tenantId).toBe("tenant-a");
});

test("missing or empty x-tenant-id → AUTH_TENANT_HEADER_MISSING", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp);
  for (const tenantId of [undefined, null, "", []]) {
    const error = await refusal(core.authenticate({ authorization: `Bearer ${token}`, tenantId }));
    expect(error.code).toBe("AUTH_TENANT_HEADER_MISSING");
    expect(error.kind).toBe("permission-denied");
    expect(error.caller?.tenantId).toBe("tenant-a");
  }
});

/** Values that equal `tenant-a` only after `.trim()` or a lenient split, or that carry invisible characters. */
const UNCLEAN_TENANTS = [
  " tenant-a",
  "tenant-a ",
  "  ",
  "tenant-a\t",
  "tenant-a\n",
  "tenant-a\u00a0", // NO-BREAK SPACE: String.prototype.trim strips it
  "\u00a0tenant-a",
  "tenant-a\u2003", // EM SPACE
  "tenant-a\u3000", // IDEOGRAPHIC SPACE
  "tenant-a\u2028", // LINE SEPARATOR
  "tenant-a\ufeff", // ZERO WIDTH NO-BREAK SPACE (BOM)
  "tenant-a\u200b", // ZERO WIDTH SPACE
  "tenant-a\u0000",
  "tenant-a\u007f",
  "tenant-a\u0085", // NEXT LINE (C1 control)
  "tenant-a, tenant-a", // a repeated header, as HTTP joins it
  "tenant-a,tenant-a",
];

async function expectUncleanTenantsRefused(core: AuthCore, authorization: string | undefined): Promise<void> {
  for (const tenantId of UNCLEAN_TENANTS) {
    const error = await refusal(core.authenticate({ authorization, tenantId }));
    expect({ tenantId, code: error.code, kind: error.kind, subject: error.subject }).toEqual({
      tenantId,
      code: "AUTH_TENANT_HEADER_INVALID",
      kind: "permission-denied",
      subject: "x-tenant-id",
    });
  }
}

test("x-tenant-id is compared exactly as received: whitespace, control, invisible characters or a comma → AUTH_TENANT_HEADER_INVALID", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const authorization = `Bearer ${await mint(idp)}`;
  await expectUncleanTenantsRefused(core, authorization);
  expect((await core.authenticate({ authorization, tenantId: "tenant-a" })).tenantId).toBe("tenant-a");
});

test("auth disabled: the same x-tenant-id rule applies to the anonymous caller's tenant", async () => {
  const core = createAuthCore({ config: parseAuthConfig(DISABLED_ENV), ...captureLogger() });
  await expectUncleanTenantsRefused(core, undefined);
});

test("repeated header values (as gRPC metadata carries them) are refused, never reduced to the first", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const authorization = `Bearer ${await mint(idp)}`;
  const twoTenants = await refusal(core.authenticate({ authorization, tenantId: ["tenant-a", "tenant-a"] }));
  expect([twoTenants.code, twoTenants.subject]).toEqual(["AUTH_TENANT_HEADER_INVALID", "x-tenant-id"]);
  const other = await mint(idp, { claims: { tenant_id: "tenant-b" } });
  for (const values of [
    [authorization, authorization],
    [authorization, `Bearer ${other}`],
  ]) {
    const twoTokens = await refusal(core.authenticate({ authorization: values, tenantId: "tenant-a" }));
    expect([twoTokens.code, twoTokens.subject, twoTokens.kind]).toEqual([
      "AUTH_TOKEN_MALFORMED",
      "authorization",
      "unauthenticated",
    ]);
  }
  // an HTTP client repeating the header: the server joins the values with a comma
  const joined = await refusal(
    core.authenticate({ authorization: `${authorization}, ${authorization}`, tenantId: "tenant-a" }),
  );
  expect([joined.code, joined.subject]).toEqual(["AUTH_TOKEN_MALFORMED", "authorization"]);
  // one value in a list is just that value
  const caller = await core.authenticate({ authorization: [authorization], tenantId: ["tenant-a"] });
  expect(caller.tenantId).toBe("tenant-a");
});

test("the caller is immutable: editing it throws, and the cached token keeps its own permissions", async () => {
  const core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
  const token = await mint(idp, { claims: { realm_access: { roles: ["app"] }, scope: "openid" } });
  const request = { authorization: `Bearer ${token}`, tenantId: "tenant-a" };
  const first = await core.check(request, "endpoint.grpc");
  const expiresAt = first.tokenExpiresAt?.getTime();
  const edits: Array<[string, () => unknown]> = [
    ["roles.push", () => (first.roles as string[]).push("ops", "security")],
    [
      "roles[0] =",
      () => {
        (first.roles as string[])[0] = "ops";
      },
    ],
    [
      "roles.length = 0",
      () => {
        (first.roles as string[]).length = 0;
      },
    ],
    ["roles.splice", () => (first.roles as string[]).splice(0, 1, "ops")],
    [
      "roles =",
      () => {
        (first as { roles: readonly string[] }).roles = ["ops"];
      },
    ],
    ["scopes.push", () => (first.scopes as string[]).push("audit:read", "audit:export")],
    ["tenantId =", () => Object.assign(first, { tenantId: "tenant-b" })],
    ["kind =", () => Object.assign(first, { kind: "anonymous" })],
    ["tokenExpiresAt.setTime", () => first.tokenExpiresAt?.setTime(Date.now() + 365 * 86_400_000)],
    ["tokenExpiresAt.setFullYear", () => first.tokenExpiresAt?.setFullYear(2999)],
  ];
  for (const [what, edit] of edits) expect(edit, what).toThrow(TypeError);
  expect(Object.isFrozen(first) && Object.isFrozen(first.roles) && Object.isFrozen(first.scopes)).toBe(true);

  const again = await core.check(request, "endpoint.grpc");
  expect(core.stats()).toMatchObject({ cacheHits: 1, signatureVerifications: 1 });
  expect(again).toMatchObject({ kind: "token", tenantId: "tenant-a", roles: ["app"], scopes: ["openid"] });
  expect(again.tokenExpiresAt?.getTime()).toBe(expiresAt);
  expect(first.roles).toEqual(["app"]);
  for (const operation of ["admin.keys", "admin.services", "audit.list", "audit.export"] as const) {
    expect((await refusal(core.check(request, operation))).code).toBe("AUTH_PERMISSION_DENIED");
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

test("auth disabled: no token needed, anonymous caller of the x-tenant-id, an error-level line at start", async () => {
  const capture = captureLogger();
  const core = createAuthCore({ config: parseAuthConfig(DISABLED_ENV), logger: capture.logger });
  expect(capture.lines.length).toBe(1);
  const warning = JSON.parse(String(capture.lines[0])) as { level: number; msg: string };
  expect(warning.level).toBe(50);
  expect(warning.msg).toContain("DISABLED");
  expect(capture.text()).toContain("SVC_AUTH_DISABLED=true");
  expect(capture.text()).toContain("SVC_AUTH_DISABLED_ACKNOWLEDGE=test-environment-only");
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
  for (const edit of [() => (caller.roles as string[]).push("ops"), () => Object.assign(caller, { tenantId: "x" })]) {
    expect(edit).toThrow(TypeError);
  }
});

test("auth enabled by default: no warning, and a missing token is refused", async () => {
  const capture = captureLogger();
  const core = createAuthCore({ config: testConfig(idp), logger: capture.logger });
  expect(capture.lines).toEqual([]);
  expect((await refusal(core.authenticate({ authorization: undefined, tenantId: "tenant-a" }))).code).toBe(
    "AUTH_TOKEN_MISSING",
  );
});
