/**
 * Verification cost per call, with and without the verified-token cache. A script, not a test:
 *   bun run components/auth/bench/verify-cost.ts
 * Starts a local discovery + JWKS server on 127.0.0.1:0 with a key of its own; no stack needed.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import pino from "pino";
import { createAuthCore, parseAuthConfig } from "../index.ts";

const N = 2000;
const { privateKey, publicKey } = await generateKeyPair("RS256");
const jwk = { ...(await exportJWK(publicKey)), kid: "bench", alg: "RS256", use: "sig" };
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request): Response {
    const { pathname } = new URL(request.url);
    if (pathname.endsWith("/.well-known/openid-configuration")) {
      return Response.json({ issuer, jwks_uri: `${issuer}/certs` });
    }
    return Response.json({ keys: [jwk] });
  },
});
const issuer = `http://127.0.0.1:${server.port}/realms/bench`;

const token = await new SignJWT({
  typ: "Bearer",
  tenant_id: "t",
  principal_id: "p",
  realm_access: { roles: ["app"] },
  scope: "openid",
})
  .setProtectedHeader({ alg: "RS256", kid: "bench", typ: "JWT" })
  .setIssuer(issuer)
  .setAudience("svc-cli")
  .setIssuedAt()
  .setExpirationTime("1h")
  .sign(privateKey);

const logger = pino({ level: "silent" });
const request = { authorization: `Bearer ${token}`, tenantId: "t" };

async function measure(label: string, cacheMaxEntries: string): Promise<void> {
  const core = createAuthCore({
    config: parseAuthConfig({ SVC_AUTH_ISSUER: issuer, SVC_AUTH_CACHE_MAX_ENTRIES: cacheMaxEntries }),
    logger,
  });
  for (let i = 0; i < 50; i++) await core.check(request, "endpoint.grpc"); // warm-up (JWKS fetch, JIT)
  const start = Bun.nanoseconds();
  for (let i = 0; i < N; i++) await core.check(request, "endpoint.grpc");
  const micros = (Bun.nanoseconds() - start) / 1000 / N;
  const stats = core.stats();
  console.log(
    `${label.padEnd(14)} ${micros.toFixed(2).padStart(8)} µs/call  (${N} calls; signature verifications ${stats.signatureVerifications}, cache hits ${stats.cacheHits})`,
  );
}

try {
  await measure("without cache", "0");
  await measure("with cache", "10000");
} finally {
  server.stop(true);
}
