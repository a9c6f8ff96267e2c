import pino, { type Logger } from "pino";
import { anonymousCaller, type Caller } from "./caller.ts";
import type { AuthConfig } from "./config.ts";
import { AuthError } from "./errors.ts";
import { createKeySource, type KeySource } from "./key-source.ts";
import { authorize, type Operation } from "./policy.ts";
import { TokenCache, tokenDigest } from "./token-cache.ts";
import { bearerToken, verifyAccessToken } from "./verify-access-token.ts";

/** What an adapter extracts from a request: the `authorization` value and the `x-tenant-id` value. */
export interface AuthRequest {
  authorization: string | null | undefined;
  tenantId: string | null | undefined;
}

export interface AuthCoreOptions {
  config: AuthConfig;
  /** JSON logger; refusals are logged with their code and reason, never with the token. */
  logger?: Logger;
  /** Epoch-ms clock, shared by the cache, the key source and `exp`/`nbf` checks (tests inject a fake one). */
  now?: () => number;
  fetch?: typeof fetch;
  /** Replaces the OIDC discovery + JWKS source (rarely needed; tests use a local IdP stand-in instead). */
  keySource?: KeySource;
}

export interface AuthStats {
  /** Tokens that went through `jwtVerify` (cache misses). */
  signatureVerifications: number;
  cacheHits: number;
  cacheSize: number;
  jwksFetches: number;
  discoveryFetches: number;
}

export interface AuthCore {
  readonly config: AuthConfig;
  readonly logger: Logger;
  /** Token (or anonymous caller when disabled) + tenant header check. Throws `AuthError`. */
  authenticate(request: AuthRequest): Promise<Caller>;
  /** `authenticate` then `authorize(caller, operation)`. Throws `AuthError`. */
  check(request: AuthRequest, operation: Operation): Promise<Caller>;
  stats(): AuthStats;
}

export const TENANT_HEADER = "x-tenant-id";

function requireTenant(caller: Caller, header: string | null | undefined): Caller {
  const tenant = header?.trim();
  if (!tenant) {
    throw new AuthError("AUTH_TENANT_HEADER_MISSING", `${TENANT_HEADER} header missing`, { subject: TENANT_HEADER });
  }
  if (tenant !== caller.tenantId) {
    throw new AuthError("AUTH_TENANT_MISMATCH", `${TENANT_HEADER} does not match the token's tenant_id`, {
      subject: TENANT_HEADER,
    });
  }
  return caller;
}

/** The one auth core per process; the gRPC interceptor and the Elysia plugin are thin adapters over it. */
export function createAuthCore(options: AuthCoreOptions): AuthCore {
  const { config } = options;
  const logger = options.logger ?? pino({ name: "svc-auth" });
  const now = options.now ?? Date.now;
  const cache = new TokenCache<Caller>(config.cacheMaxEntries, now);
  const counters = { signatureVerifications: 0, cacheHits: 0 };

  let keySource: KeySource | undefined = options.keySource;
  if (config.disabled) {
    logger.warn(
      { setting: "SVC_AUTH_DISABLED=true" },
      "auth: authentication is DISABLED; every request runs as the anonymous caller of its x-tenant-id",
    );
  } else {
    if (!config.issuer) throw new AuthError("AUTH_IDP_UNAVAILABLE", "no issuer configured");
    keySource ??= createKeySource({
      issuer: config.issuer,
      cooldownMs: config.jwksCooldownSeconds * 1000,
      now,
      logger,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async function tokenCaller(authorization: string | null | undefined): Promise<Caller> {
    const token = bearerToken(authorization);
    const digest = tokenDigest(token);
    const cached = cache.get(digest);
    if (cached) {
      counters.cacheHits++;
      return cached;
    }
    if (!keySource || !config.issuer) throw new AuthError("AUTH_IDP_UNAVAILABLE", "no key source");
    counters.signatureVerifications++;
    const caller = await verifyAccessToken(token, {
      issuer: config.issuer,
      allowedAudiences: config.allowedAudiences,
      algorithms: config.algorithms,
      clockToleranceSeconds: config.clockToleranceSeconds,
      getKey: keySource.getKey,
      now,
    });
    if (caller.tokenExpiresAt) cache.set(digest, caller, caller.tokenExpiresAt.getTime());
    return caller;
  }

  async function authenticateUnlogged(request: AuthRequest): Promise<Caller> {
    if (config.disabled) {
      const tenant = request.tenantId?.trim();
      if (!tenant) {
        throw new AuthError("AUTH_TENANT_HEADER_MISSING", `${TENANT_HEADER} header missing`, {
          subject: TENANT_HEADER,
        });
      }
      return anonymousCaller(tenant);
    }
    return requireTenant(await tokenCaller(request.authorization), request.tenantId);
  }

  function logRefusal(error: unknown, operation: Operation | undefined): void {
    if (error instanceof AuthError) {
      const entry = { code: error.code, kind: error.kind, subject: error.subject, operation, reason: error.message };
      if (error.kind === "unavailable") logger.warn(entry, "auth: request refused");
      else logger.info(entry, "auth: request refused");
    } else {
      logger.error({ operation, reason: String(error) }, "auth: unexpected failure");
    }
  }

  return {
    config,
    logger,
    async authenticate(request) {
      try {
        return await authenticateUnlogged(request);
      } catch (error) {
        logRefusal(error, undefined);
        throw error;
      }
    },
    async check(request, operation) {
      try {
        const caller = await authenticateUnlogged(request);
        authorize(caller, operation);
        return caller;
      } catch (error) {
        logRefusal(error, operation);
        throw error;
      }
    },
    stats() {
      const keys = keySource?.stats() ?? { jwksFetches: 0, discoveryFetches: 0 };
      return { ...counters, cacheSize: cache.size, ...keys };
    },
  };
}
