/**
 * An OIDC issuer on 127.0.0.1 port 0 for endpoint's tests: discovery and JWKS over real HTTP, RS256 access tokens
 * shaped like Keycloak's (realm roles, tenant_id), signed with WebCrypto, so @svc/auth verifies them for real.
 */
export interface TestIssuer {
  issuer: string;
  token(roles: string[], tenant?: string): Promise<string>;
  stop(): void;
}

const base64url = (value: Uint8Array | string) => Buffer.from(value).toString("base64url");

export async function startTestIssuer(): Promise<TestIssuer> {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const { kty, n, e } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const key = { kty, n, e, kid: "endpoint-test", alg: "RS256", use: "sig" };
  let issuer = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path.endsWith("/.well-known/openid-configuration")) {
        return Response.json({ issuer, jwks_uri: `${issuer}/protocol/openid-connect/certs` });
      }
      if (path.endsWith("/protocol/openid-connect/certs")) return Response.json({ keys: [key] });
      return new Response("not found", { status: 404 });
    },
  });
  issuer = `http://127.0.0.1:${server.port}/realms/endpoint-test`;
  return {
    issuer,
    async token(roles, tenant = "tenant-a") {
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: issuer,
        aud: ["svc-cli"],
        typ: "Bearer",
        iat: now,
        exp: now + 600,
        tenant_id: tenant,
        principal_id: `p-${roles.join("-") || "none"}`,
        realm_access: { roles },
        scope: "openid",
      };
      const signed = `${base64url(JSON.stringify({ alg: "RS256", kid: key.kid, typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
      const signature = await crypto.subtle.sign(
        "RSASSA-PKCS1-v1_5",
        pair.privateKey,
        new TextEncoder().encode(signed),
      );
      return `${signed}.${base64url(new Uint8Array(signature))}`;
    },
    stop: () => void server.stop(true),
  };
}
