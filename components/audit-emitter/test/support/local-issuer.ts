/**
 * A local OIDC issuer for the auth path of the interceptor tests: discovery + JWKS on 127.0.0.1 port 0, and
 * RS256 access tokens shaped like Keycloak's, signed with WebCrypto. Real HTTP and real signatures, no stand-in
 * for @svc/auth itself.
 */
export interface LocalIssuer {
  issuer: string;
  /** An access token with these claims over the defaults (`undefined` deletes one). */
  mint(claims?: Record<string, unknown>): Promise<string>;
  stop(): void;
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");

export async function startLocalIssuer(): Promise<LocalIssuer> {
  const { publicKey, privateKey } = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const { kty, n, e } = await crypto.subtle.exportKey("jwk", publicKey);
  const jwk = { kty, n, e, kid: "local-1", alg: "RS256", use: "sig" };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request): Response {
      const { pathname } = new URL(request.url);
      if (pathname === "/realms/local/.well-known/openid-configuration") {
        return Response.json({ issuer, jwks_uri: `${issuer}/protocol/openid-connect/certs` });
      }
      if (pathname === "/realms/local/protocol/openid-connect/certs") return Response.json({ keys: [jwk] });
      return new Response("not found", { status: 404 });
    },
  });
  const issuer = `http://127.0.0.1:${server.port}/realms/local`;
  return {
    issuer,
    async mint(overrides = {}) {
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: issuer,
        aud: ["svc-cli"],
        typ: "Bearer",
        iat: now,
        exp: now + 300,
        tenant_id: "tenant-a",
        principal_id: "principal-1",
        realm_access: { roles: ["app"] },
        scope: "openid",
        ...overrides,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      const input = `${b64url(JSON.stringify({ alg: "RS256", kid: jwk.kid, typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
      const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, new TextEncoder().encode(input));
      return `${input}.${b64url(new Uint8Array(signature))}`;
    },
    stop: () => void server.stop(true),
  };
}
