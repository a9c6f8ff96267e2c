import { afterEach, expect, test } from "bun:test";
import { type AuthCore, createAuthCore } from "../index.ts";
import {
  captureLogger,
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

async function setup(options: Parameters<typeof startTestIssuer>[0] = {}) {
  const idp = await startTestIssuer(options);
  idps.push(idp);
  const clock = fakeClock();
  const core = createAuthCore({
    config: testConfig(idp, { SVC_AUTH_JWKS_COOLDOWN_SECONDS: "30", SVC_AUTH_CACHE_MAX_ENTRIES: "0" }),
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
