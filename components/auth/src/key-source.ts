import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters, type JWTVerifyGetKey } from "jose";
import type { Logger } from "pino";
import { AuthError } from "./errors.ts";

export interface KeySourceOptions {
  /** Exact issuer; discovery is `${issuer}/.well-known/openid-configuration` and must name this issuer. */
  issuer: string;
  /** Minimum time between two JWKS fetches (an unknown `kid` triggers at most one refetch per cooldown). */
  cooldownMs: number;
  /** A JWKS older than this is refetched on next use (keys removed by the IdP stop being honoured). */
  maxAgeMs?: number;
  /** Per-request timeout of the discovery and JWKS fetches. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
  logger?: Logger;
}

export interface KeySourceStats {
  discoveryFetches: number;
  jwksFetches: number;
}

export interface KeySource {
  /** Key resolver for jose `jwtVerify`: unknown kid → one refetch (if the cooldown allows) → `AUTH_UNKNOWN_KEY`. */
  getKey: JWTVerifyGetKey;
  stats(): KeySourceStats;
}

interface Loaded {
  resolve: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

/**
 * OIDC discovery + JWKS, cached. Every fetch attempt (success or failure) opens a cooldown window during which no
 * further JWKS fetch is made, so a flood of tokens with unknown `kid`s costs the IdP at most one request per window.
 */
export function createKeySource(options: KeySourceOptions): KeySource {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const stats: KeySourceStats = { discoveryFetches: 0, jwksFetches: 0 };
  let jwksUri: string | undefined;
  let loaded: Loaded | undefined;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<Loaded> | undefined;

  async function getJson(url: string, what: string): Promise<unknown> {
    let response: Response;
    try {
      response = await doFetch(url, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: "application/json" },
      });
    } catch (cause) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} fetch failed: ${String(cause)}`, { cause });
    }
    if (!response.ok) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} fetch returned HTTP ${response.status}`);
    }
    try {
      return await response.json();
    } catch (cause) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} is not JSON`, { cause });
    }
  }

  async function discover(): Promise<string> {
    if (jwksUri !== undefined) return jwksUri;
    stats.discoveryFetches++;
    const url = `${options.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const doc = (await getJson(url, "OIDC discovery")) as { issuer?: unknown; jwks_uri?: unknown };
    if (doc.issuer !== options.issuer) {
      throw new AuthError(
        "AUTH_IDP_UNAVAILABLE",
        `OIDC discovery names issuer ${JSON.stringify(doc.issuer)}, configured ${JSON.stringify(options.issuer)}`,
      );
    }
    if (typeof doc.jwks_uri !== "string" || !/^https?:\/\//.test(doc.jwks_uri)) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", "OIDC discovery has no usable jwks_uri");
    }
    jwksUri = doc.jwks_uri;
    return jwksUri;
  }

  async function load(): Promise<Loaded> {
    lastAttemptAt = now();
    const uri = await discover();
    stats.jwksFetches++;
    const jwks = (await getJson(uri, "JWKS")) as JSONWebKeySet;
    let resolve: Loaded["resolve"];
    try {
      resolve = createLocalJWKSet(jwks);
    } catch (cause) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", "JWKS is malformed", { cause });
    }
    loaded = { resolve, fetchedAt: now() };
    options.logger?.info({ keys: jwks.keys.length, jwksUri: uri }, "auth: JWKS loaded");
    return loaded;
  }

  /** Starts a fetch if the cooldown allows (joining one in flight); otherwise returns undefined. */
  function refetch(): Promise<Loaded> | undefined {
    if (inFlight) return inFlight;
    if (now() - lastAttemptAt < options.cooldownMs) return undefined;
    inFlight = load().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  async function current(): Promise<Loaded> {
    if (loaded && now() - loaded.fetchedAt < maxAgeMs) return loaded;
    const pending = refetch();
    if (pending) {
      try {
        return await pending;
      } catch (error) {
        if (!loaded) throw error;
        options.logger?.warn({ reason: (error as Error).message }, "auth: JWKS refresh failed, keeping the old set");
        return loaded;
      }
    }
    if (loaded) return loaded;
    throw new AuthError("AUTH_IDP_UNAVAILABLE", "JWKS not loaded yet and the last attempt failed within the cooldown");
  }

  const getKey: JWTVerifyGetKey = async (header: JWSHeaderParameters, token) => {
    const set = await current();
    try {
      return await set.resolve(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
    }
    const pending = refetch();
    if (pending) {
      const fresh = await pending.catch(() => undefined);
      if (fresh) {
        try {
          return await fresh.resolve(header, token);
        } catch (error) {
          if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
        }
      }
    }
    throw new AuthError(
      "AUTH_UNKNOWN_KEY",
      `no key in the issuer's JWKS matches kid ${JSON.stringify(String(header.kid).slice(0, 64))}`,
      {
        subject: "kid",
      },
    );
  };

  return { getKey, stats: () => ({ ...stats }) };
}
