import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey } from "node:crypto";
import { rejectionOf } from "@svc/testkit";
import { exportSPKI, importJWK, SignJWT } from "jose";
import { AuthError, type AuthRefusalCode, bearerToken, createAuthCore, MAX_BEARER_TOKEN_LENGTH } from "../index.ts";
import {
  b64url,
  captureLogger,
  countingServer,
  mint,
  mintOfLength,
  newKey,
  startTestIssuer,
  type TestIssuer,
  testConfig,
} from "./support/test-issuer.ts";

let idp: TestIssuer;
beforeAll(async () => {
  idp = await startTestIssuer();
});
afterAll(() => idp.stop());

function core(env: Record<string, string> = {}) {
  return createAuthCore({ config: testConfig(idp, { SVC_AUTH_CACHE_MAX_ENTRIES: "0", ...env }), ...captureLogger() });
}

/** The refusal of `token` by a fresh core; fails the test when the token is accepted. */
const refusal = (token: string, tenantId = "tenant-a"): Promise<AuthError> =>
  rejectionOf(core().authenticate({ authorization: `Bearer ${token}`, tenantId }), AuthError);

async function expectRefused(token: string, code: AuthRefusalCode): Promise<AuthError> {
  const error = await refusal(token);
  expect(error.code).toBe(code);
  expect(error.kind).toBe("unauthenticated");
  return error;
}

describe("accepted", () => {
  test("a valid access token yields the caller", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await mint(idp, {
      nowSeconds: now,
      claims: { scope: "openid audit:read", realm_access: { roles: ["security", "audit-only"] } },
    });
    const caller = await core().authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" });
    expect(caller).toEqual({
      kind: "token",
      principalId: "principal-1",
      tenantId: "tenant-a",
      roles: ["security", "audit-only"],
      scopes: ["openid", "audit:read"],
      subject: "0b7f6c1e-user",
      tokenExpiresAt: new Date((now + 300) * 1000),
    });
  });

  test("a single string audience and an RFC 9068 at+jwt token without payload typ are accepted", async () => {
    const token = await mint(idp, { claims: { aud: "svc-cli", typ: undefined }, header: { typ: "at+jwt" } });
    const caller = await core().authenticate({ authorization: `bearer ${token}`, tenantId: "tenant-a" });
    expect(caller.principalId).toBe("principal-1");
  });

  test("ES256 and PS256 keys from the JWKS verify", async () => {
    for (const alg of ["ES256", "PS256"] as const) {
      const key = await newKey(`key-${alg}`, alg);
      idp.publish(key);
      const token = await mint(idp, { key });
      // fresh core: its first JWKS fetch sees the key
      expect((await core().authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" })).tenantId).toBe(
        "tenant-a",
      );
    }
  });
});

describe("refused", () => {
  test("no authorization header → AUTH_TOKEN_MISSING; not `Bearer x` → AUTH_TOKEN_MALFORMED", () => {
    expect(() => bearerToken(undefined)).toThrow(expect.objectContaining({ code: "AUTH_TOKEN_MISSING" }));
    expect(() => bearerToken("  ")).toThrow(expect.objectContaining({ code: "AUTH_TOKEN_MISSING" }));
    expect(() => bearerToken("Basic dXNlcjpwdw==")).toThrow(expect.objectContaining({ code: "AUTH_TOKEN_MALFORMED" }));
  });

  test("garbage → AUTH_TOKEN_MALFORMED", async () => {
    await expectRefused("not-a-jwt", "AUTH_TOKEN_MALFORMED");
    await expectRefused(`${b64url({ alg: "RS256" })}.e30`, "AUTH_TOKEN_MALFORMED");
  });

  test("alg none (hand-crafted) → AUTH_ALG_NOT_ALLOWED", async () => {
    const payload = JSON.parse(Buffer.from(String((await mint(idp)).split(".")[1]), "base64url").toString());
    await expectRefused(`${b64url({ alg: "none", typ: "JWT" })}.${b64url(payload)}.`, "AUTH_ALG_NOT_ALLOWED");
    await expectRefused(`${b64url({ alg: "none", kid: idp.key.kid })}.${b64url(payload)}.`, "AUTH_ALG_NOT_ALLOWED");
  });

  test("HS256 signed with the RSA public key (PEM and DER) as the secret → AUTH_ALG_NOT_ALLOWED", async () => {
    const publicKey = await importJWK(idp.key.publicJwk, "RS256", { extractable: true });
    const pem = await exportSPKI(publicKey as CryptoKey);
    const der = createPublicKey(pem).export({ type: "spki", format: "der" });
    for (const secret of [new TextEncoder().encode(pem), new Uint8Array(der)]) {
      const token = await new SignJWT({
        iss: idp.issuer,
        aud: "svc-cli",
        typ: "Bearer",
        tenant_id: "tenant-a",
        principal_id: "p",
        realm_access: { roles: ["app"] },
      })
        .setProtectedHeader({ alg: "HS256", kid: idp.key.kid })
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(secret);
      await expectRefused(token, "AUTH_ALG_NOT_ALLOWED");
    }
  });

  test("an allowed-by-jose asymmetric alg outside SVC_AUTH_ALGORITHMS → AUTH_ALG_NOT_ALLOWED", async () => {
    const key = await newKey("es-only", "ES256");
    idp.publish(key);
    const token = await mint(idp, { key });
    const error = await rejectionOf(
      core({ SVC_AUTH_ALGORITHMS: "RS256" }).authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" }),
      AuthError,
    );
    expect(error.code).toBe("AUTH_ALG_NOT_ALLOWED");
  });

  test("expired (beyond the clock tolerance) → AUTH_TOKEN_EXPIRED", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(await mint(idp, { claims: { iat: now - 600, exp: now - 31 } }), "AUTH_TOKEN_EXPIRED");
  });

  test("expired within the clock tolerance is still accepted", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await mint(idp, { claims: { iat: now - 600, exp: now - 5 } });
    const caller = await core().authenticate({ authorization: `Bearer ${token}`, tenantId: "tenant-a" });
    expect(caller.tenantId).toBe("tenant-a");
  });

  test("nbf in the future beyond the tolerance → AUTH_TOKEN_NOT_YET_VALID", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(await mint(idp, { claims: { nbf: now + 120 } }), "AUTH_TOKEN_NOT_YET_VALID");
  });

  test("no exp → AUTH_CLAIM_MISSING", async () => {
    await expectRefused(await mint(idp, { claims: { exp: undefined } }), "AUTH_CLAIM_MISSING");
  });

  test("wrong issuer → AUTH_ISSUER_MISMATCH (also a trailing-slash variant)", async () => {
    await expectRefused(
      await mint(idp, { claims: { iss: "http://evil.example/realms/test" } }),
      "AUTH_ISSUER_MISMATCH",
    );
    await expectRefused(await mint(idp, { claims: { iss: `${idp.issuer}/` } }), "AUTH_ISSUER_MISMATCH");
  });

  test("wrong audience → AUTH_AUDIENCE_MISMATCH with `audience mismatch`", async () => {
    const error = await expectRefused(await mint(idp, { claims: { aud: ["account"] } }), "AUTH_AUDIENCE_MISMATCH");
    expect(error.message).toContain("audience mismatch");
    await expectRefused(await mint(idp, { claims: { aud: undefined } }), "AUTH_AUDIENCE_MISMATCH");
  });

  test("an audience allowed by SVC_AUTH_ALLOWED_AUDIENCES is accepted", async () => {
    const token = await mint(idp, { claims: { aud: "svc-sdk" } });
    const caller = await core({ SVC_AUTH_ALLOWED_AUDIENCES: "svc-cli,svc-sdk" }).authenticate({
      authorization: `Bearer ${token}`,
      tenantId: "tenant-a",
    });
    expect(caller.tenantId).toBe("tenant-a");
  });

  test("an ID token (typ ID) → AUTH_WRONG_TOKEN_TYPE", async () => {
    await expectRefused(await mint(idp, { claims: { typ: "ID", nonce: "n" } }), "AUTH_WRONG_TOKEN_TYPE");
  });

  test("a refresh token (typ Refresh / Offline) → AUTH_WRONG_TOKEN_TYPE", async () => {
    await expectRefused(await mint(idp, { claims: { typ: "Refresh" } }), "AUTH_WRONG_TOKEN_TYPE");
    await expectRefused(await mint(idp, { claims: { typ: "Offline" } }), "AUTH_WRONG_TOKEN_TYPE");
  });

  test("no typ at all, or a foreign header typ → AUTH_WRONG_TOKEN_TYPE", async () => {
    await expectRefused(await mint(idp, { claims: { typ: undefined } }), "AUTH_WRONG_TOKEN_TYPE");
    await expectRefused(await mint(idp, { header: { typ: "logout+jwt" } }), "AUTH_WRONG_TOKEN_TYPE");
  });

  test("a tampered payload (one claim changed, signature kept) → AUTH_SIGNATURE_INVALID", async () => {
    const [header, payload, signature] = (await mint(idp)).split(".");
    const claims = JSON.parse(Buffer.from(String(payload), "base64url").toString());
    claims.tenant_id = "tenant-b";
    await expectRefused(`${header}.${b64url(claims)}.${signature}`, "AUTH_SIGNATURE_INVALID");
  });

  test("signed by a key that is not the published one but reuses its kid → AUTH_SIGNATURE_INVALID", async () => {
    const impostor = { ...(await newKey(idp.key.kid)), kid: idp.key.kid };
    await expectRefused(await mint(idp, { key: impostor }), "AUTH_SIGNATURE_INVALID");
  });

  test("without tenant_id / principal_id → AUTH_CLAIM_MISSING naming the claim", async () => {
    const noTenant = await expectRefused(await mint(idp, { claims: { tenant_id: undefined } }), "AUTH_CLAIM_MISSING");
    expect(noTenant.subject).toBe("tenant_id");
    const noPrincipal = await expectRefused(
      await mint(idp, { claims: { principal_id: undefined } }),
      "AUTH_CLAIM_MISSING",
    );
    expect(noPrincipal.subject).toBe("principal_id");
  });
});

/** The IdP's discovery + JWKS request counts moved by `run` (0/0: the refusal came before any key lookup). */
async function fetchesDuring(run: () => Promise<unknown>): Promise<{ discovery: number; jwks: number }> {
  const before = { ...idp.counts };
  await run();
  return { discovery: idp.counts.discovery - before.discovery, jwks: idp.counts.jwks - before.jwks };
}

describe("crit", () => {
  test("an unknown crit extension → AUTH_TOKEN_MALFORMED naming crit (not AUTH_ALG_NOT_ALLOWED), no key fetched", async () => {
    const token = await mint(idp, {
      header: { crit: ["urn:example:policy"], "urn:example:policy": "strict" },
      signOptions: { crit: { "urn:example:policy": true } },
    });
    let error: AuthError | undefined;
    expect(await fetchesDuring(async () => (error = await refusal(token)))).toEqual({ discovery: 0, jwks: 0 });
    expect([error?.code, error?.subject, error?.kind]).toEqual(["AUTH_TOKEN_MALFORMED", "crit", "unauthenticated"]);
  });

  test("crit naming b64 (RFC 7797, which jose understands) is refused too: we support no extension", async () => {
    const token = await mint(idp, { header: { crit: ["b64"], b64: true } });
    const error = await expectRefused(token, "AUTH_TOKEN_MALFORMED");
    expect(error.subject).toBe("crit");
  });

  test("a malformed crit (empty, not a list) → AUTH_TOKEN_MALFORMED", async () => {
    const [, payload, signature] = (await mint(idp)).split(".");
    for (const crit of [[], "exp", [1]]) {
      const header = b64url({ alg: "RS256", kid: idp.key.kid, typ: "JWT", crit });
      expect((await expectRefused(`${header}.${payload}.${signature}`, "AUTH_TOKEN_MALFORMED")).subject).toBe("crit");
    }
  });
});

describe("iat", () => {
  const now = () => Math.floor(Date.now() / 1000);

  test("iat 10 minutes in the future → AUTH_TOKEN_NOT_YET_VALID naming iat", async () => {
    const iat = now() + 600;
    const error = await expectRefused(await mint(idp, { claims: { iat, exp: iat + 300 } }), "AUTH_TOKEN_NOT_YET_VALID");
    expect(error.subject).toBe("iat");
  });

  test("iat 10 years in the future → AUTH_TOKEN_NOT_YET_VALID naming iat", async () => {
    const iat = now() + 10 * 365 * 86_400;
    const error = await expectRefused(await mint(idp, { claims: { iat, exp: iat + 300 } }), "AUTH_TOKEN_NOT_YET_VALID");
    expect(error.subject).toBe("iat");
  });

  test("iat just beyond the clock tolerance is refused; within it (a skewed IdP clock) is accepted", async () => {
    const beyond = now() + 31 + 5; // default tolerance 30 s; 5 s of slack for a slow test
    await expectRefused(await mint(idp, { claims: { iat: beyond } }), "AUTH_TOKEN_NOT_YET_VALID");
    for (const iat of [now() + 20, now(), now() - 3600]) {
      const caller = await core().authenticate({
        authorization: `Bearer ${await mint(idp, { claims: { iat } })}`,
        tenantId: "tenant-a",
      });
      expect(caller.tenantId).toBe("tenant-a");
    }
  });

  test("a non-numeric iat → AUTH_TOKEN_MALFORMED naming iat", async () => {
    expect((await expectRefused(await mint(idp, { claims: { iat: "soon" } }), "AUTH_TOKEN_MALFORMED")).subject).toBe(
      "iat",
    );
  });
});

describe("key-locating header parameters (jku, x5u, jwk) are never followed or trusted", () => {
  test("jku / x5u pointing at a server: no request is made to it; the token verifies against the configured JWKS only", async () => {
    const attacker = await newKey("attacker-jku");
    const target = countingServer({ keys: [attacker.publicJwk] });
    try {
      const refs = { jku: `${target.url}/jwks.json`, x5u: `${target.url}/cert.pem` };
      // signed by the IdP's key: accepted, the references ignored
      const honest = await mint(idp, { header: refs });
      expect((await core().authenticate({ authorization: `Bearer ${honest}`, tenantId: "tenant-a" })).tenantId).toBe(
        "tenant-a",
      );
      // signed by a key only the referenced set holds: refused
      await expectRefused(await mint(idp, { key: attacker, header: refs }), "AUTH_UNKNOWN_KEY");
      // the same, reusing the IdP's kid: the IdP's key does not verify it
      await expectRefused(
        await mint(idp, { key: { ...attacker, kid: idp.key.kid }, header: refs }),
        "AUTH_SIGNATURE_INVALID",
      );
      expect(target.requests()).toBe(0);
    } finally {
      target.stop();
    }
  });

  test("a token signed by an attacker key carried in the jwk header is refused", async () => {
    const attacker = await newKey("attacker-jwk");
    await expectRefused(await mint(idp, { key: attacker, header: { jwk: attacker.publicJwk } }), "AUTH_UNKNOWN_KEY");
    await expectRefused(
      await mint(idp, { key: { ...attacker, kid: idp.key.kid }, header: { jwk: attacker.publicJwk } }),
      "AUTH_SIGNATURE_INVALID",
    );
    const { kid: _kid, ...jwkWithoutKid } = attacker.publicJwk;
    await expectRefused(
      await mint(idp, { key: attacker, header: { kid: undefined, jwk: jwkWithoutKid } }),
      "AUTH_TOKEN_MALFORMED",
    );
  });
});

describe("kid", () => {
  test("a token without kid → AUTH_TOKEN_MALFORMED naming kid, before any key lookup (even with a single matching key)", async () => {
    const token = await mint(idp, { header: { kid: undefined } });
    let error: AuthError | undefined;
    expect(await fetchesDuring(async () => (error = await refusal(token)))).toEqual({ discovery: 0, jwks: 0 });
    expect([error?.code, error?.subject]).toEqual(["AUTH_TOKEN_MALFORMED", "kid"]);
    for (const kid of ["", 42]) {
      expect((await expectRefused(await mint(idp, { header: { kid } }), "AUTH_TOKEN_MALFORMED")).subject).toBe("kid");
    }
  });
});

describe("size", () => {
  test(`a token of ${MAX_BEARER_TOKEN_LENGTH} characters is accepted; one more → AUTH_TOKEN_TOO_LARGE before any key lookup`, async () => {
    expect(MAX_BEARER_TOKEN_LENGTH).toBe(8192);
    const largest = await mintOfLength(idp, MAX_BEARER_TOKEN_LENGTH);
    const caller = await core().authenticate({ authorization: `Bearer ${largest}`, tenantId: "tenant-a" });
    expect(caller.tenantId).toBe("tenant-a");
    const tooLarge = await mintOfLength(idp, MAX_BEARER_TOKEN_LENGTH + 1);
    let error: AuthError | undefined;
    expect(await fetchesDuring(async () => (error = await refusal(tooLarge)))).toEqual({ discovery: 0, jwks: 0 });
    expect([error?.code, error?.kind, error?.subject]).toEqual([
      "AUTH_TOKEN_TOO_LARGE",
      "unauthenticated",
      "authorization",
    ]);
  });

  test("a validly signed 2 MB token → AUTH_TOKEN_TOO_LARGE, not verified, not hashed into the cache", async () => {
    const huge = await mint(idp, { claims: { pad: "x".repeat(1_500_000) } });
    expect(huge.length).toBeGreaterThan(2_000_000);
    const fresh = createAuthCore({ config: testConfig(idp), ...captureLogger() });
    const error = await rejectionOf(
      fresh.authenticate({ authorization: `Bearer ${huge}`, tenantId: "tenant-a" }),
      AuthError,
    );
    expect(error.code).toBe("AUTH_TOKEN_TOO_LARGE");
    expect(fresh.stats()).toMatchObject({ signatureVerifications: 0, cacheSize: 0, jwksFetches: 0 });
    expect(() => bearerToken(`Bearer ${huge}`)).toThrow(expect.objectContaining({ code: "AUTH_TOKEN_TOO_LARGE" }));
    expect(() => bearerToken(`Bearer ${"a".repeat(MAX_BEARER_TOKEN_LENGTH + 1)}`)).toThrow(
      expect.objectContaining({ code: "AUTH_TOKEN_TOO_LARGE" }),
    );
  });
});
