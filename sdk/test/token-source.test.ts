import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hangUpListener, rejectionOf, waitFor } from "@svc/testkit";
import { createRemoteJWKSet, decodeJwt, generateKeyPair, jwtVerify, SignJWT } from "jose";
import {
  createClient,
  EXPIRY_SKEW_MS,
  MAX_TIMER_DELAY_MS,
  RETRY_MAX_MS,
  RETRY_MIN_MS,
  type RenewalTimers,
  type RenewedTokens,
  SdkError,
  TokenSource,
  type TokenSourceOptions,
} from "../index.ts";
import { type CountingIdp, startCountingIdp } from "./support/counting-idp.ts";
import { createTestRealm, type TestRealm } from "./support/keycloak-realm.ts";
import { startTestServer, type TestServer } from "./support/test-server.ts";

// Keycloak issues 4-second access tokens in this realm; with the default renew_before_seconds (60) the SDK
// clamps to half the lifetime and renews about 2 s after issue. Tests of the schedule itself use an injected
// clock and tokens of their own instead of waiting for real expiry.
const LIFESPAN_SECONDS = 4;
const HOUR = 3600;
const DAY = 24 * HOUR;

let realm: TestRealm;
let server: TestServer;
let signingKey: CryptoKey;

async function forged(claims: { exp: number; iat?: number }): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256" })
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(signingKey);
}

/** A clock the test moves by hand (milliseconds since the epoch). */
function fakeClock(startMs: number): { ms: number; now: () => number } {
  const clock = { ms: startMs, now: () => clock.ms };
  return clock;
}

function tokenSource(options: Partial<TokenSourceOptions> & { tokenEndpoint: string }): TokenSource {
  return new TokenSource({
    accessToken: undefined,
    refreshToken: "opaque-refresh",
    clientId: "svc-cli",
    renewBeforeSeconds: 60,
    ...options,
  });
}

/** Timers a test fires by hand: `armed[i]` is the i-th timer the source set. */
function manualTimers(): RenewalTimers & { armed: { run: () => void; delayMs: number }[]; fire(index: number): void } {
  const armed: { run: () => void; delayMs: number }[] = [];
  return {
    armed,
    set(run, delayMs) {
      armed.push({ run, delayMs });
      return armed.length - 1;
    },
    clear() {},
    fire(index) {
      const timer = armed[index];
      if (!timer) throw new Error(`no timer ${index}`);
      timer.run();
    },
  };
}

/** An IdP that refuses every refresh as Keycloak does for a revoked token. */
function refusingIdp(): CountingIdp {
  return startCountingIdp({
    answer: () => Response.json({ error: "invalid_grant", error_description: "Token is not active" }, { status: 400 }),
  });
}

beforeAll(async () => {
  realm = await createTestRealm(LIFESPAN_SECONDS);
  server = await startTestServer();
  signingKey = (await generateKeyPair("ES256")).privateKey;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await realm?.remove();
});

describe("automatic renewal against Keycloak", () => {
  test("the timer alone renews the access token before it expires and the next call carries the new one", async () => {
    const tokens = await realm.issueTokens();
    const renewed: RenewedTokens[] = [];
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      tenant_id: "tenant-r",
      idp: { idp_url: realm.idpUrl, realm: realm.realm },
      on_tokens_renewed: (next) => renewed.push(next),
    });
    try {
      // No call before the renewal: only the background timer can renew.
      const first = await waitFor("the background renewal", async () => renewed[0], { timeoutMs: 15_000 });
      await client.health();
      const sent = server.seen.at(-1)?.authorization ?? "";
      // Later renewals may have happened meanwhile (every ~2 s): the call carries one of the renewed tokens.
      expect(renewed.map((r) => `Bearer ${r.accessToken}`)).toContain(sent);
      expect(sent).not.toBe(`Bearer ${tokens.accessToken}`);
      const jwks = createRemoteJWKSet(new URL(`${realm.idpUrl}/realms/${realm.realm}/protocol/openid-connect/certs`));
      const { payload } = await jwtVerify(first.accessToken, jwks, { issuer: `${realm.idpUrl}/realms/${realm.realm}` });
      expect(payload.exp ?? 0).toBeGreaterThan(decodeJwt(tokens.accessToken).exp ?? 0);
    } finally {
      client.close();
    }
  });

  test("renewal on demand: with the timer unable to fire, current() renews once the clock passes renewAt", async () => {
    const tokens = await realm.issueTokens();
    const { iat = 0, exp = 0 } = decodeJwt(tokens.accessToken);
    const renewAtMs = (exp - Math.min(60, (exp - iat) / 2)) * 1000;
    // A day behind: the timer's delay is a day, so within this test only current() can renew.
    const clock = fakeClock(iat * 1000 - DAY * 1000);
    const renewed: RenewedTokens[] = [];
    const source = tokenSource({
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      tokenEndpoint: realm.tokenEndpoint,
      clientId: realm.clientId,
      onTokensRenewed: (next) => renewed.push(next),
      now: clock.now,
    });
    try {
      expect(await source.current()).toBe(tokens.accessToken);
      clock.ms = renewAtMs - 1;
      expect(await source.current()).toBe(tokens.accessToken);
      expect(renewed).toHaveLength(0);
      clock.ms = renewAtMs;
      const next = await source.current();
      expect(renewed).toHaveLength(1);
      expect(next).toBe(renewed[0]?.accessToken ?? "");
      expect(next).not.toBe(tokens.accessToken);
      // Issued within the same second the exp can be equal; it never goes backwards.
      expect(decodeJwt(next ?? "").exp ?? 0).toBeGreaterThanOrEqual(exp);
    } finally {
      source.close();
    }
  });

  test("a refresh token alone is exchanged on the first call", async () => {
    const tokens = await realm.issueTokens();
    const client = createClient({
      address: server.address,
      secure: false,
      refresh_token: tokens.refreshToken,
      idp: { idp_url: realm.idpUrl, realm: realm.realm },
    });
    try {
      await client.health();
      const sent = server.seen.at(-1)?.authorization ?? "";
      expect(decodeJwt(sent.replace(/^Bearer /, "")).iss).toBe(`${realm.idpUrl}/realms/${realm.realm}`);
    } finally {
      client.close();
    }
  });
});

describe("renewal failures", () => {
  test("a failed background renewal (revoked refresh token) does not fail calls while the access token is valid", async () => {
    const tokens = await realm.issueTokens();
    await realm.revoke(tokens.refreshToken);
    const idp = startCountingIdp({ forwardTo: realm.tokenEndpoint });
    const now = Math.floor(Date.now() / 1000);
    // Valid for 10 more minutes and due for renewal since 400 s (renew 1000 s before exp, lifetime 3600 s).
    const access = await forged({ iat: now - 3000, exp: now + 600 });
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: access,
      refresh_token: tokens.refreshToken,
      renew_before_seconds: 1000,
      idp: { token_endpoint: idp.tokenEndpoint, client_id: realm.clientId },
    });
    try {
      await waitFor("the refused background renewal", async () => idp.requests[0], { timeoutMs: 10_000 });
      await client.health();
      await client.health();
      expect(server.seen.at(-1)?.authorization).toBe(`Bearer ${access}`);
      // The timer retries with a backoff (1 s, then 2 s, ...), not in a tight loop.
      await waitFor("a background retry", async () => idp.requests[1], { timeoutMs: 10_000 });
      const [first = 0, second = 0] = idp.requests;
      expect(second - first).toBeGreaterThanOrEqual(RETRY_MIN_MS - 50);
      await client.health();
      expect(server.seen.at(-1)?.authorization).toBe(`Bearer ${access}`);
      expect((await rejectionOf(client.renewAccessToken(), SdkError)).code).toBe("SDK_REFRESH_FAILED");
    } finally {
      client.close();
      await idp.stop();
    }
  });

  test("revoked refresh token: the old access token is used until it expires, then SDK_REFRESH_FAILED", async () => {
    const tokens = await realm.issueTokens();
    await realm.revoke(tokens.refreshToken);
    const idp = startCountingIdp({ forwardTo: realm.tokenEndpoint });
    const iat = Math.floor(Date.now() / 1000);
    const access = await forged({ iat, exp: iat + HOUR });
    const clock = fakeClock(iat * 1000);
    const source = tokenSource({
      accessToken: access,
      refreshToken: tokens.refreshToken,
      tokenEndpoint: idp.tokenEndpoint,
      clientId: realm.clientId,
      now: clock.now,
      backgroundRenewal: false,
    });
    try {
      clock.ms = (iat + HOUR - 60) * 1000; // renewAt: Keycloak refuses, the token is still valid
      expect(await source.current()).toBe(access);
      expect(idp.requests).toHaveLength(1);
      clock.ms = (iat + HOUR) * 1000 - EXPIRY_SKEW_MS - 1; // last moment of validity (less the skew)
      expect(await source.current()).toBe(access);
      expect(idp.requests).toHaveLength(2);
      clock.ms += 1; // no longer valid: the failure surfaces
      const error = await rejectionOf(source.current(), SdkError);
      expect(error.code).toBe("SDK_REFRESH_FAILED");
      expect(error.canRetry).toBe(true);
      expect(idp.requests).toHaveLength(3);
      clock.ms = (iat + HOUR + 1) * 1000; // expired: each call asks again, and fails
      expect((await rejectionOf(source.current(), SdkError)).code).toBe("SDK_REFRESH_FAILED");
      expect(idp.requests).toHaveLength(4);
    } finally {
      source.close();
      await idp.stop();
    }
  });

  test("while the access token is valid, failed renewals are retried with a bounded backoff", async () => {
    const idp = refusingIdp();
    const iat = 1_000_000_000;
    const clock = fakeClock(iat * 1000);
    const source = tokenSource({
      accessToken: await forged({ iat, exp: iat + DAY }),
      tokenEndpoint: idp.tokenEndpoint,
      renewBeforeSeconds: HOUR,
      now: clock.now,
      backgroundRenewal: false,
    });
    try {
      clock.ms = (iat + DAY - HOUR) * 1000;
      const gaps: number[] = [];
      let last = clock.ms;
      while (gaps.length < 9) {
        const before = idp.requests.length;
        expect(await source.current()).toBeString();
        expect(await source.current()).toBeString(); // same instant: no second request
        if (idp.requests.length > before) {
          expect(idp.requests.length).toBe(before + 1);
          if (before > 0) gaps.push(clock.ms - last);
          last = clock.ms;
        }
        clock.ms += 1000;
      }
      expect(gaps).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60].map((s) => Math.min(RETRY_MAX_MS, s * 1000)));
    } finally {
      source.close();
      await idp.stop();
    }
  });

  test("a garbage refresh token is refused by the IdP: SDK_REFRESH_FAILED", async () => {
    const tokens = await realm.issueTokens();
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: tokens.accessToken,
      refresh_token: "garbage",
      idp: { idp_url: realm.idpUrl, realm: realm.realm },
    });
    try {
      const error = await rejectionOf(client.renewAccessToken(), SdkError);
      expect(error.code).toBe("SDK_REFRESH_FAILED");
      expect(error.canRetry).toBe(true);
    } finally {
      client.close();
    }
  });

  test("an IdP that hangs up without answering: SDK_REFRESH_FAILED once the access token has expired", async () => {
    // A listener of the test's own that closes every connection: its port stays taken for the whole test, unlike a
    // released port, which another process could take before the SDK dials it.
    const idp = hangUpListener();
    const now = Math.floor(Date.now() / 1000);
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: await forged({ iat: now - 100, exp: now - 1 }),
      refresh_token: "opaque-refresh",
      idp: { token_endpoint: `${idp.url}/token` },
    });
    try {
      const error = await rejectionOf(client.health(), SdkError);
      expect(error.code).toBe("SDK_REFRESH_FAILED");
      // No HTTP answer at all (a refused token would name the refresh_token instead).
      expect(error.subject).toBe("idp");
      expect(error.canRetry).toBe(true);
    } finally {
      client.close();
      idp.stop();
    }
  });

  test("an expired refresh token fails with SDK_REFRESH_TOKEN_EXPIRED without asking the IdP", async () => {
    const idp = refusingIdp();
    const now = Math.floor(Date.now() / 1000);
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: await forged({ iat: now - 100, exp: now - 10 }),
      refresh_token: await forged({ iat: now - 100, exp: now - 5 }),
      idp: { token_endpoint: idp.tokenEndpoint },
    });
    try {
      expect((await rejectionOf(client.health(), SdkError)).code).toBe("SDK_REFRESH_TOKEN_EXPIRED");
      expect(idp.requests).toHaveLength(0);
    } finally {
      client.close();
      await idp.stop();
    }
  });

  test("an expired access token without a refresh token fails with SDK_ACCESS_TOKEN_EXPIRED", async () => {
    const now = Math.floor(Date.now() / 1000);
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: await forged({ exp: now - 1 }),
    });
    try {
      expect((await rejectionOf(client.health(), SdkError)).code).toBe("SDK_ACCESS_TOKEN_EXPIRED");
    } finally {
      client.close();
    }
  });

  test("end to end: once Keycloak's short-lived token is due, a revoked refresh token fails the call", async () => {
    const tokens = await realm.issueTokens();
    await realm.revoke(tokens.refreshToken);
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      idp: { idp_url: realm.idpUrl, realm: realm.realm },
    });
    try {
      // A 4 s token is never "valid for more than the 5 s skew", so the first failed renewal surfaces.
      const code = await waitFor(
        "the renewal failure",
        async () => {
          const error = await client.health().then(
            () => undefined,
            (e: unknown) => e,
          );
          return error instanceof SdkError ? error.code : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(code).toBe("SDK_REFRESH_FAILED");
    } finally {
      client.close();
    }
  });
});

describe("renewal schedule", () => {
  test("renew_before_seconds is clamped to half the token lifetime", async () => {
    const iat = 1_000_000_000;
    const clock = fakeClock(iat * 1000);
    const idp = startCountingIdp({
      answer: async () => Response.json({ access_token: await forged({ iat, exp: iat + 100 }) }),
    });
    const source = tokenSource({
      accessToken: await forged({ iat, exp: iat + 10 }),
      tokenEndpoint: idp.tokenEndpoint,
      renewBeforeSeconds: 60,
      now: clock.now,
      backgroundRenewal: false,
    });
    try {
      clock.ms += 4_999; // before exp - 5 s: no renewal
      await source.current();
      expect(idp.requests).toHaveLength(0);
      clock.ms += 1; // exp - min(60, 10 / 2)
      await source.current();
      expect(idp.requests).toHaveLength(1);
    } finally {
      source.close();
      await idp.stop();
    }
  });

  test("a token living longer than setTimeout's limit (24.8 days) arms a clamped timer, not an early renewal", async () => {
    const idp = refusingIdp();
    const timers = manualTimers();
    const now = Math.floor(Date.now() / 1000);
    const source = tokenSource({
      accessToken: await forged({ iat: now, exp: now + 60 * DAY }),
      tokenEndpoint: idp.tokenEndpoint,
      timers,
    });
    try {
      expect(60 * DAY * 1000).toBeGreaterThan(MAX_TIMER_DELAY_MS);
      // An unclamped delay would make setTimeout fire after 1 ms.
      expect(timers.armed.map((t) => t.delayMs)).toEqual([MAX_TIMER_DELAY_MS]);
      expect(idp.requests).toHaveLength(0);
    } finally {
      source.close();
      await idp.stop();
    }
  });

  test("a timer that fires before the renewal time re-arms instead of renewing", async () => {
    const iat = 1_000_000_000;
    const renewAtMs = (iat + HOUR - 60) * 1000;
    const idp = refusingIdp();
    const clock = fakeClock(renewAtMs - 50);
    const timers = manualTimers();
    const source = tokenSource({
      accessToken: await forged({ iat, exp: iat + HOUR }),
      tokenEndpoint: idp.tokenEndpoint,
      now: clock.now,
      timers,
    });
    try {
      expect(timers.armed).toHaveLength(1);
      // The timer fires while the clock is an hour before renewAt (a clamped delay, or a clock set back): re-arm.
      clock.ms = iat * 1000;
      timers.fire(0);
      expect(timers.armed).toHaveLength(2);
      expect(idp.requests).toHaveLength(0);
      // The re-armed timer fires when renewal is due: one request.
      clock.ms = renewAtMs;
      timers.fire(1);
      await waitFor("the due timer's renewal", async () => idp.requests[0], { timeoutMs: 5_000, intervalMs: 10 });
      expect(idp.requests).toHaveLength(1);
    } finally {
      source.close();
      await idp.stop();
    }
  });
});
