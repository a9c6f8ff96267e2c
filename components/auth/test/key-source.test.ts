import { afterEach, expect, test } from "bun:test";
import { hangUpListener, rejectionOf } from "@svc/testkit";
import { AuthConfigError, type AuthCore, AuthError, createAuthCore, parseAuthConfig } from "../index.ts";
import {
  captureLogger,
  DISABLED_ENV,
  fakeClock,
  mint,
  newKey,
  startTestIssuer,
  type TestIssuer,
  testConfig,
} from "./support/test-issuer.ts";

const idps: TestIssuer[] = [];
afterEach(async () => {
  await Promise.all(idps.splice(0).map((idp) => idp.stop()));
});

async function setup(options: Parameters<typeof startTestIssuer>[0] = {}, env: Record<string, string> = {}) {
  const idp = await startTestIssuer(options);
  idps.push(idp);
  const clock = fakeClock();
  const core = createAuthCore({
    config: testConfig(idp, { SVC_AUTH_JWKS_COOLDOWN_SECONDS: "30", SVC_AUTH_CACHE_MAX_ENTRIES: "0", ...env }),
    now: clock.now,
    ...captureLogger(),
  });
  const nowSeconds = () => Math.floor(clock.now() / 1000);
  return { idp, clock, core, nowSeconds };
}

const attempt = (core: AuthCore, token: string) =>
  core.authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" }).catch((error: unknown) => error);

test("discovery and JWKS are fetched once and then served from memory", async () => {
  const { idp, core, nowSeconds } = await setup();
  for (let i = 0; i < 5; i++) {
    expect(
      await attempt(core, await mint(idp, { nowSeconds: nowSeconds(), claims: { jti: String(i) } })),
    ).toMatchObject({ kind: "token" });
  }
  expect(idp.counts).toEqual({ discovery: 1, jwks: 1 });
});

test("an unknown kid causes exactly one JWKS refetch (after the cooldown), then AUTH_UNKNOWN_KEY", async () => {
  const { idp, clock, core, nowSeconds } = await setup();
  await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  expect(idp.counts.jwks).toBe(1);
  clock.advance(31_000);
  const stranger = await newKey("not-published");
  expect(await attempt(core, await mint(idp, { key: stranger, nowSeconds: nowSeconds() }))).toMatchObject({
    code: "AUTH_UNKNOWN_KEY",
  });
  expect(idp.counts.jwks).toBe(2);
  // the same unknown kid again, still inside the cooldown: no further fetch
  expect(await attempt(core, await mint(idp, { key: stranger, nowSeconds: nowSeconds() }))).toMatchObject({
    code: "AUTH_UNKNOWN_KEY",
  });
  expect(idp.counts.jwks).toBe(2);
});

test("a flood of 50 unknown kids fetches the JWKS at most once more within the cooldown", async () => {
  const { idp, clock, core, nowSeconds } = await setup();
  await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  clock.advance(31_000);
  const strangers = await Promise.all(Array.from({ length: 50 }, (_, i) => newKey(`flood-${i}`, "ES256")));
  const tokens = await Promise.all(strangers.map((key) => mint(idp, { key, nowSeconds: nowSeconds() })));
  const results = await Promise.all(tokens.map((token) => attempt(core, token)));
  expect(results.every((r) => (r as { code?: string }).code === "AUTH_UNKNOWN_KEY")).toBe(true);
  expect(idp.counts.jwks).toBe(2);
  // a second flood, sequential this time, still inside the cooldown window
  for (const token of tokens.slice(0, 10))
    expect(await attempt(core, token)).toMatchObject({ code: "AUTH_UNKNOWN_KEY" });
  expect(idp.counts.jwks).toBe(2);
  expect(idp.counts.discovery).toBe(1);
});

test("a flood inside the first cooldown after start-up causes no refetch at all", async () => {
  const { idp, core, nowSeconds } = await setup();
  await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  const stranger = await newKey("early");
  const token = await mint(idp, { key: stranger, nowSeconds: nowSeconds() });
  await Promise.all(Array.from({ length: 50 }, () => attempt(core, token)));
  expect(idp.counts.jwks).toBe(1);
});

test("key rotation: a new key published in the JWKS is accepted after one refetch", async () => {
  const { idp, clock, core, nowSeconds } = await setup();
  await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  const rotated = await newKey("key-2");
  idp.publish(rotated);
  clock.advance(30_000);
  const caller = await attempt(core, await mint(idp, { key: rotated, nowSeconds: nowSeconds() }));
  expect(caller).toMatchObject({ kind: "token", tenantId: "tenant-a" });
  expect(idp.counts.jwks).toBe(2);
  // old key still valid (still published), no extra fetch
  expect(await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }))).toMatchObject({ kind: "token" });
  expect(idp.counts.jwks).toBe(2);
});

test("the JWKS is refreshed after its max age (10 min), and a failed refresh keeps the old keys", async () => {
  const { idp, clock, core, nowSeconds } = await setup();
  await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  clock.advance(11 * 60_000);
  idp.failJwks(500);
  expect(await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }))).toMatchObject({ kind: "token" });
  expect(idp.counts.jwks).toBe(2);
});

test("discovery naming another issuer → AUTH_IDP_UNAVAILABLE (kind unavailable), no JWKS fetched", async () => {
  const { idp, core, nowSeconds } = await setup({ discoveryIssuer: (issuer) => `${issuer}/` });
  const error = await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }));
  expect(error).toMatchObject({ code: "AUTH_IDP_UNAVAILABLE", kind: "unavailable" });
  expect(idp.counts.jwks).toBe(0);
});

test("JWKS down at start → AUTH_IDP_UNAVAILABLE; retried only after the cooldown", async () => {
  const { idp, clock, core, nowSeconds } = await setup();
  idp.failJwks(503);
  const token = await mint(idp, { nowSeconds: nowSeconds() });
  expect(await attempt(core, token)).toMatchObject({ code: "AUTH_IDP_UNAVAILABLE" });
  expect(await attempt(core, token)).toMatchObject({ code: "AUTH_IDP_UNAVAILABLE" });
  expect(idp.counts.jwks).toBe(1);
  idp.failJwks(200);
  clock.advance(30_000);
  expect(await attempt(core, token)).toMatchObject({ kind: "token" });
  expect(idp.counts.jwks).toBe(2);
});

test("IdP unreachable → AUTH_IDP_UNAVAILABLE", async () => {
  const { idp, core, nowSeconds } = await setup();
  const token = await mint(idp, { nowSeconds: nowSeconds() });
  await idp.stop();
  expect(await attempt(core, token)).toMatchObject({ code: "AUTH_IDP_UNAVAILABLE", kind: "unavailable" });
});

test("start(): SVC_AUTH_ISSUER with a trailing slash fails the start with AuthConfigError naming it and both values", async () => {
  const idp = await startTestIssuer();
  idps.push(idp);
  const core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: `${idp.issuer}/` }), ...captureLogger() });
  const error = await rejectionOf(core.start(), AuthConfigError);
  expect(error.code).toBe("AUTH_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUTH_ISSUER");
  expect(error.message).toContain("SVC_AUTH_ISSUER");
  expect(error.message).toContain(JSON.stringify(`${idp.issuer}/`)); // configured
  expect(error.message).toContain(JSON.stringify(idp.issuer)); // what discovery says
  expect(idp.counts).toEqual({ discovery: 1, jwks: 0 });
});

test("start(): any other issuer named by discovery also fails the start (AuthConfigError, not retryable)", async () => {
  const { core } = await setup({ discoveryIssuer: (issuer) => issuer.replace("/realms/test", "/realms/other") });
  const error = await rejectionOf(core.start(), AuthConfigError);
  expect([error.subject, error.canRetry]).toEqual(["SVC_AUTH_ISSUER", false]);
  expect(error.message).toContain("/realms/other");
});

test("start(): a matching issuer loads discovery and the JWKS once; requests then need no fetch", async () => {
  const { idp, core, nowSeconds } = await setup();
  await core.start();
  expect(idp.counts).toEqual({ discovery: 1, jwks: 1 });
  expect(await attempt(core, await mint(idp, { nowSeconds: nowSeconds() }))).toMatchObject({ kind: "token" });
  expect(idp.counts).toEqual({ discovery: 1, jwks: 1 });
});

test("start(): IdP unreachable → AuthError AUTH_IDP_UNAVAILABLE (canRetry), not a config error", async () => {
  const nobody = hangUpListener();
  try {
    const core = createAuthCore({
      config: parseAuthConfig({ SVC_AUTH_ISSUER: `${nobody.url}/realms/test` }),
      ...captureLogger(),
    });
    const error = await rejectionOf(core.start(), AuthError);
    expect([error.code, error.canRetry]).toEqual(["AUTH_IDP_UNAVAILABLE", true]);
  } finally {
    nobody.stop();
  }
});

test("start() with auth disabled resolves without fetching anything", async () => {
  const core = createAuthCore({ config: parseAuthConfig(DISABLED_ENV), ...captureLogger() });
  await core.start();
  expect(core.stats()).toMatchObject({ discoveryFetches: 0, jwksFetches: 0 });
});

test("a key rotated out of the JWKS takes its cached tokens with it at the next refetch (unknown kid after the cooldown)", async () => {
  const { idp, clock, core, nowSeconds } = await setup(
    {},
    { SVC_AUTH_JWKS_COOLDOWN_SECONDS: "1", SVC_AUTH_CACHE_MAX_ENTRIES: "100" },
  );
  const staying = await newKey("key-staying");
  idp.publish(staying);
  const doomed = await mint(idp, { nowSeconds: nowSeconds(), ttlSeconds: 3600 }); // key-1
  const kept = await mint(idp, { key: staying, nowSeconds: nowSeconds(), ttlSeconds: 3600 });
  for (const token of [doomed, kept, doomed, kept]) expect(await attempt(core, token)).toMatchObject({ kind: "token" });
  expect(core.stats()).toMatchObject({ signatureVerifications: 2, cacheHits: 2, cacheSize: 2, jwksFetches: 1 });

  const rotated = await newKey("key-2");
  idp.publish(rotated);
  idp.unpublish("key-1");
  clock.advance(1_000); // the cooldown (1 s) is over
  expect(await attempt(core, await mint(idp, { key: rotated, nowSeconds: nowSeconds() }))).toMatchObject({
    kind: "token",
  });
  expect(idp.counts.jwks).toBe(2);

  expect(await attempt(core, doomed)).toMatchObject({ code: "AUTH_UNKNOWN_KEY" });
  // the token of a key still published stays cached: served without another signature check
  const before = core.stats();
  expect(await attempt(core, kept)).toMatchObject({ kind: "token" });
  expect(core.stats().cacheHits).toBe(before.cacheHits + 1);
  expect(core.stats().signatureVerifications).toBe(before.signatureVerifications);
});

test("a key removed from the JWKS is noticed by the max-age refresh even when every request hits the cache", async () => {
  const { idp, clock, core, nowSeconds } = await setup({}, { SVC_AUTH_CACHE_MAX_ENTRIES: "100" });
  const token = await mint(idp, { nowSeconds: nowSeconds(), ttlSeconds: 3600 });
  expect(await attempt(core, token)).toMatchObject({ kind: "token" });
  expect(await attempt(core, token)).toMatchObject({ kind: "token" });
  expect(core.stats()).toMatchObject({ cacheHits: 1, jwksFetches: 1 });
  idp.publish(await newKey("key-2"));
  idp.unpublish("key-1");
  clock.advance(11 * 60_000); // past the JWKS max age (10 min), token still far from exp
  expect(await attempt(core, token)).toMatchObject({ code: "AUTH_UNKNOWN_KEY" });
  expect(idp.counts.jwks).toBe(2);
});

test("a key replaced under the same kid also evicts the tokens the old key verified", async () => {
  const { idp, clock, core, nowSeconds } = await setup(
    {},
    { SVC_AUTH_JWKS_COOLDOWN_SECONDS: "1", SVC_AUTH_CACHE_MAX_ENTRIES: "100" },
  );
  const token = await mint(idp, { nowSeconds: nowSeconds(), ttlSeconds: 3600 });
  expect(await attempt(core, token)).toMatchObject({ kind: "token" });
  idp.unpublish("key-1");
  const replacement = await newKey("key-1");
  idp.publish(replacement);
  clock.advance(1_000);
  // a token of an unknown kid makes the source refetch
  expect(await attempt(core, await mint(idp, { key: await newKey("nobody"), nowSeconds: nowSeconds() }))).toMatchObject(
    { code: "AUTH_UNKNOWN_KEY" },
  );
  expect(idp.counts.jwks).toBe(2);
  expect(await attempt(core, token)).toMatchObject({ code: "AUTH_SIGNATURE_INVALID" });
});
