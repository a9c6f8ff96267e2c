import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitFor } from "@svc/testkit";
import { createRemoteJWKSet, decodeJwt, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { createClient, type RenewedTokens, SdkError, TokenSource } from "../index.ts";
import { createTestRealm, type TestRealm } from "./support/keycloak-realm.ts";
import { startTestServer, type TestServer } from "./support/test-server.ts";

// Keycloak issues 4-second access tokens in this realm; with the default renew_before_seconds (60) the SDK
// clamps to half the lifetime and renews about 2 s after issue.
const LIFESPAN_SECONDS = 4;

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

async function failure(promise: Promise<unknown>): Promise<SdkError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SdkError) return error;
    throw error;
  }
  throw new Error("expected a failure");
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
  test("the timer renews the access token before it expires and the next call carries the new one", async () => {
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
      await client.health();
      expect(server.seen.at(-1)?.authorization).toBe(`Bearer ${tokens.accessToken}`);
      // No calls while waiting: only the background timer can renew.
      const next = await waitFor("the background renewal", async () => renewed[0], { timeoutMs: 15_000 });
      await client.health();
      const sent = server.seen.at(-1)?.authorization ?? "";
      expect(sent).toBe(`Bearer ${next.accessToken}`);
      expect(next.accessToken).not.toBe(tokens.accessToken);
      const jwks = createRemoteJWKSet(new URL(`${realm.idpUrl}/realms/${realm.realm}/protocol/openid-connect/certs`));
      const { payload } = await jwtVerify(next.accessToken, jwks, { issuer: `${realm.idpUrl}/realms/${realm.realm}` });
      expect(payload.exp ?? 0).toBeGreaterThan(decodeJwt(tokens.accessToken).exp ?? 0);
    } finally {
      client.close();
    }
  });

  test("renewal on demand: a call after the renewal time renews first (explicit token_endpoint)", async () => {
    const tokens = await realm.issueTokens();
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      idp: { token_endpoint: realm.tokenEndpoint, client_id: realm.clientId },
    });
    try {
      const seen = await waitFor(
        "a call with a renewed token",
        async () => {
          await client.health();
          const sent = server.seen.at(-1)?.authorization;
          return sent !== `Bearer ${tokens.accessToken}` ? sent : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(decodeJwt((seen ?? "").replace(/^Bearer /, "")).exp ?? 0).toBeGreaterThan(
        decodeJwt(tokens.accessToken).exp ?? 0,
      );
    } finally {
      client.close();
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
  test("a revoked refresh token surfaces SDK_REFRESH_FAILED on the next call", async () => {
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
      const error = await failure(client.renewAccessToken());
      expect(error.code).toBe("SDK_REFRESH_FAILED");
      expect(error.canRetry).toBe(true);
    } finally {
      client.close();
    }
  });

  test("an expired refresh token fails with SDK_REFRESH_TOKEN_EXPIRED without asking the IdP", async () => {
    const now = Math.floor(Date.now() / 1000);
    const client = createClient({
      address: server.address,
      secure: false,
      access_token: await forged({ iat: now - 100, exp: now - 10 }),
      refresh_token: await forged({ iat: now - 100, exp: now - 5 }),
      idp: { token_endpoint: "http://127.0.0.1:9/unused" },
    });
    try {
      expect((await failure(client.health())).code).toBe("SDK_REFRESH_TOKEN_EXPIRED");
    } finally {
      client.close();
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
      expect((await failure(client.health())).code).toBe("SDK_ACCESS_TOKEN_EXPIRED");
    } finally {
      client.close();
    }
  });
});

describe("renewal schedule", () => {
  test("renew_before_seconds is clamped to half the token lifetime", async () => {
    let clock = 1_000_000_000_000;
    const iat = clock / 1000;
    const closed = Bun.serve({ port: 0, fetch: () => new Response("{}", { status: 400 }) });
    const endpoint = `http://127.0.0.1:${closed.port}/token`;
    const source = new TokenSource({
      accessToken: await forged({ iat, exp: iat + 10 }),
      refreshToken: "opaque",
      tokenEndpoint: endpoint,
      clientId: "svc-cli",
      renewBeforeSeconds: 60,
      now: () => clock,
    });
    try {
      clock += 4_900; // before exp - 5 s: no renewal
      expect(await source.current()).toBeString();
      clock += 200; // after exp - 5 s: renews, and this IdP refuses
      expect((await failure(source.current())).code).toBe("SDK_REFRESH_FAILED");
    } finally {
      source.close();
      closed.stop(true);
    }
  });
});
