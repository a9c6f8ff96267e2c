import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT, type SignOptions } from "jose";
import pino, { type Logger } from "pino";
import { type AuthConfig, parseAuthConfig } from "../../index.ts";

/** A signing key of the test's own; `kid` is what the JWKS and the token header carry. */
export interface TestKey {
  kid: string;
  alg: "RS256" | "PS256" | "ES256";
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newKey(kid: string, alg: TestKey["alg"] = "RS256"): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey, publicJwk };
}

/** A clock tests move by hand; handed to the core as `now`. */
export function fakeClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number): void {
      t += ms;
    },
    set(ms: number): void {
      t = ms;
    },
  };
}

/**
 * IdP stand-in on 127.0.0.1:0 serving OIDC discovery and the JWKS of keys the test publishes, counting requests.
 * Not a mock of Keycloak: only the two public documents a verifier reads, served over real HTTP. With `token`, the
 * discovery document names a token endpoint too, answered by `token` (see stand-in-token-idp.ts).
 */
export async function startTestIssuer(
  options: {
    discoveryIssuer?: (issuer: string) => string;
    token?: (request: Request) => Response | Promise<Response>;
  } = {},
) {
  const published: TestKey[] = [await newKey("key-1")];
  const counts = { discovery: 0, jwks: 0 };
  let jwksStatus = 200;
  const { token } = options;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request): Response | Promise<Response> {
      const { pathname } = new URL(request.url);
      if (pathname === "/realms/test/.well-known/openid-configuration") {
        counts.discovery++;
        const issuer = options.discoveryIssuer ? options.discoveryIssuer(idp.issuer) : idp.issuer;
        const tokenEndpoint = token ? { token_endpoint: `${idp.issuer}/protocol/openid-connect/token` } : {};
        return Response.json({ issuer, jwks_uri: `${idp.issuer}/protocol/openid-connect/certs`, ...tokenEndpoint });
      }
      if (token && pathname === "/realms/test/protocol/openid-connect/token" && request.method === "POST") {
        return token(request);
      }
      if (pathname === "/realms/test/protocol/openid-connect/certs") {
        counts.jwks++;
        if (jwksStatus !== 200) return new Response("down", { status: jwksStatus });
        return Response.json({ keys: published.map((key) => key.publicJwk) });
      }
      return new Response("not found", { status: 404 });
    },
  });
  const idp = {
    issuer: `http://127.0.0.1:${server.port}/realms/test`,
    counts,
    published,
    get key(): TestKey {
      const first = published[0];
      if (!first) throw new Error("no key published");
      return first;
    },
    publish(key: TestKey) {
      published.push(key);
    },
    /** Takes the key with this `kid` out of the JWKS (the IdP rotated it out). */
    unpublish(kid: string) {
      const index = published.findIndex((key) => key.kid === kid);
      if (index < 0) throw new Error(`no published key ${kid}`);
      published.splice(index, 1);
    },
    failJwks(statusCode: number) {
      jwksStatus = statusCode;
    },
    stop: () => server.stop(true),
  };
  return idp;
}

export type TestIssuer = Awaited<ReturnType<typeof startTestIssuer>>;

export interface MintOptions {
  key?: TestKey;
  /** Overrides (`undefined` deletes the claim). */
  claims?: Record<string, unknown>;
  /** Header overrides (`undefined` deletes the parameter, e.g. `{ kid: undefined }`). */
  header?: Record<string, unknown>;
  /** jose sign options, e.g. `{ crit: { "urn:x": true } }` to sign a header with a `crit` parameter. */
  signOptions?: SignOptions;
  /** Epoch seconds used for iat and as the base of exp (default: real now). */
  nowSeconds?: number;
  ttlSeconds?: number;
}

/** An access token shaped like Keycloak's (typ Bearer, realm_access.roles, scope, tenant_id, principal_id). */
export async function mint(idp: TestIssuer, options: MintOptions = {}): Promise<string> {
  const key = options.key ?? idp.key;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: idp.issuer,
    aud: ["svc-cli", "account"],
    sub: "0b7f6c1e-user",
    typ: "Bearer",
    azp: "svc-cli",
    iat: now,
    exp: now + (options.ttlSeconds ?? 300),
    tenant_id: "tenant-a",
    principal_id: "principal-1",
    realm_access: { roles: ["app", "default-roles-test"] },
    scope: "openid profile email",
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const header: Record<string, unknown> = { alg: key.alg, kid: key.kid, typ: "JWT", ...options.header };
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader(header as { alg: string })
    .sign(key.privateKey, options.signOptions);
}

/**
 * A valid token of exactly `length` characters, grown with a `pad` claim and a `pad` header parameter (base64url
 * cannot reach every length by the payload alone).
 */
export async function mintOfLength(idp: TestIssuer, length: number, options: MintOptions = {}): Promise<string> {
  const base = await mint(idp, options);
  for (let headerPad = 0; headerPad < 4; headerPad++) {
    let pad = Math.max(0, Math.floor(((length - base.length) * 3) / 4) - 48);
    for (;;) {
      const token = await mint(idp, {
        ...options,
        claims: { ...options.claims, pad: "p".repeat(pad) },
        header: { ...options.header, pad: "h".repeat(headerPad) },
      });
      if (token.length === length) return token;
      if (token.length > length) break;
      pad++;
    }
  }
  throw new Error(`cannot mint a token of exactly ${length} characters`);
}

/** An HTTP server on 127.0.0.1:0 that counts every request it gets (a `jku` / `x5u` target that must stay unread). */
export function countingServer(body: unknown = { keys: [] }) {
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(): Response {
      requests++;
      return Response.json(body);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: () => requests,
    stop: () => server.stop(true),
  };
}

export function testConfig(idp: TestIssuer, env: Record<string, string> = {}): AuthConfig {
  return parseAuthConfig({ SVC_AUTH_ISSUER: idp.issuer, ...env });
}

/** Auth explicitly off, as a test environment sets it: both variables (see README "Auth disabled"). */
export const DISABLED_ENV = {
  SVC_AUTH_DISABLED: "true",
  SVC_AUTH_DISABLED_ACKNOWLEDGE: "test-environment-only",
} as const;

/** A pino logger whose JSON lines land in `lines` (to assert on what is logged, and what is not). */
export function captureLogger(): { logger: Logger; lines: string[]; text: () => string } {
  const lines: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(line) });
  return { logger, lines, text: () => lines.join("") };
}

export const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
