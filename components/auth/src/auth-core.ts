import pino, { type Logger } from "pino";
import { bearerToken, type HeaderValue, TENANT_HEADER, tenantHeader } from "./auth-headers.ts";
import { anonymousCaller, type Caller } from "./caller.ts";
import { AUTH_DISABLED_ACKNOWLEDGEMENT, type AuthConfig } from "./config.ts";
import { AuthError } from "./errors.ts";
import { createKeySource, type KeySource } from "./key-source.ts";
import { authorize, type Operation } from "./policy.ts";
import { TokenCache, tokenDigest } from "./token-cache.ts";
import { verifyAccessToken } from "./verify-access-token.ts";

/**
 * What an adapter extracts from a request: the `authorization` and `x-tenant-id` values as the transport gives them
 * (an HTTP header string, or every gRPC metadata value of the key). Validated by `auth-headers.ts`, once, here.
 */
export interface AuthRequest {
  authorization: HeaderValue;
  tenantId: HeaderValue;
}

export interface AuthCoreOptions {
  config: AuthConfig;
  /** JSON logger; refusals are logged with their code and reason, never with the token. */
  logger?: Logger;
  /** Epoch-ms clock, shared by the cache, the key source and `exp`/`nbf`/`iat` checks (tests inject a fake one). */
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
  /**
   * Start-up check, awaited by `main.ts` before serving: OIDC discovery must name `SVC_AUTH_ISSUER` exactly (else
   * `AuthConfigError` on `SVC_AUTH_ISSUER` with both values), and the JWKS is loaded. An unreachable IdP rejects
   * with `AUTH_IDP_UNAVAILABLE` (`canRetry`). Resolves at once when auth is disabled.
   */
  start(): Promise<void>;
  /** Token (or anonymous caller when disabled) + tenant header check. Throws `AuthError`. */
  authenticate(request: AuthRequest): Promise<Caller>;
  /** `authenticate` then `authorize(caller, operation)`. Throws `AuthError`. */
  check(request: AuthRequest, operation: Operation): Promise<Caller>;
  stats(): AuthStats;
}

/** A verified token in the cache: its (deep-frozen) caller, and the JWKS member that verified it. */
interface CachedCaller {
  caller: Caller;
  keyId: string;
}

/** The one auth core per process; the gRPC interceptor and the Elysia plugin are thin adapters over it. */
export function createAuthCore(options: AuthCoreOptions): AuthCore {
  const { config } = options;
  const logger = options.logger ?? pino({ name: "svc-auth" });
  const now = options.now ?? Date.now;
  const cache = new TokenCache<CachedCaller>(config.cacheMaxEntries, now);
  const counters = { signatureVerifications: 0, cacheHits: 0 };

  let keySource: KeySource | undefined = options.keySource;
  if (config.disabled) {
    const settings = ["SVC_AUTH_DISABLED=true", `SVC_AUTH_DISABLED_ACKNOWLEDGE=${AUTH_DISABLED_ACKNOWLEDGEMENT}`];
    logger.error(
      { settings },
      `auth: authentication is DISABLED (${settings.join(", ")}): no token is checked, every request runs as the ` +
        "anonymous caller of its x-tenant-id. For test environments only",
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
    keySource.onKeysRemoved((keyIds) => {
      const evicted = cache.deleteWhere((entry) => keyIds.has(entry.keyId));
      logger.info(
        { removedKeys: [...keyIds], evictedTokens: evicted },
        "auth: keys left the issuer's JWKS; the cached tokens they verified are dropped",
      );
    });
  }

  async function tokenCaller(authorization: HeaderValue): Promise<Caller> {
    const token = bearerToken(authorization); // size and shape, before anything else touches the token
    if (!keySource || !config.issuer) throw new AuthError("AUTH_IDP_UNAVAILABLE", "no key source");
    const source = keySource;
    // a cache hit never reaches the key source; a stale JWKS is refreshed here so a removed key evicts its tokens
    const refreshing = source.refreshIfStale();
    if (refreshing) await refreshing;
    const digest = tokenDigest(token);
    const cached = cache.get(digest);
    if (cached) {
      counters.cacheHits++;
      return cached.caller;
    }
    counters.signatureVerifications++;
    let keyId: string | undefined;
    const caller = await verifyAccessToken(token, {
      issuer: config.issuer,
      allowedAudiences: config.allowedAudiences,
      algorithms: config.algorithms,
      clockToleranceSeconds: config.clockToleranceSeconds,
      getKey: async (header, input) => {
        const resolved = await source.resolveKey(header, input);
        keyId = resolved.keyId;
        return resolved.key;
      },
      now,
    });
    // not cached if its key left the JWKS while it was being verified (the eviction has already run)
    if (caller.tokenExpiresAt && keyId !== undefined && source.holds(keyId)) {
      cache.set(digest, { caller, keyId }, caller.tokenExpiresAt.getTime());
    }
    return caller;
  }

  async function authenticateUnlogged(request: AuthRequest): Promise<Caller> {
    if (config.disabled) return anonymousCaller(tenantHeader(request.tenantId));
    const caller = await tokenCaller(request.authorization); // 401 beats 403: the token is looked at first
    // The token was verified: a refusal for the tenant header names the caller, so an audit of the refusal can.
    let claimed: string;
    try {
      claimed = tenantHeader(request.tenantId);
    } catch (error) {
      if (!(error instanceof AuthError)) throw error;
      throw new AuthError(error.code, error.message, { subject: error.subject, cause: error.cause, caller });
    }
    if (claimed !== caller.tenantId) {
      throw new AuthError("AUTH_TENANT_MISMATCH", `${TENANT_HEADER} does not match the token's tenant_id`, {
        subject: TENANT_HEADER,
        caller,
      });
    }
    return caller;
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
    async start() {
      if (config.disabled || !keySource) return;
      await keySource.start();
      logger.info({ issuer: config.issuer }, "auth: issuer matches OIDC discovery; JWKS loaded");
    },
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
