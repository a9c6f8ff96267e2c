import { createHash } from "node:crypto";
import {
  type CryptoKey,
  calculateJwkThumbprint,
  createLocalJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWK,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
  type LocalJWKSet,
} from "jose";
import type { Logger } from "pino";
import { AuthConfigError, AuthError } from "./errors.ts";
import { discoveryDocument, getIdpJson } from "./oidc-discovery.ts";

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

/** A verification key and the identity of the JWKS member it came from (`kid` + RFC 7638 thumbprint). */
export interface ResolvedKey {
  key: CryptoKey;
  keyId: string;
}

export interface KeySource {
  /** Key resolver for jose `jwtVerify`: unknown kid → one refetch (if the cooldown allows) → `AUTH_UNKNOWN_KEY`. */
  getKey: JWTVerifyGetKey;
  /** `getKey`, also saying which JWKS member the key is, so what it verified can be dropped when the member goes. */
  resolveKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ResolvedKey>;
  /** Whether the JWKS held now still has the member `keyId`. */
  holds(keyId: string): boolean;
  /** `listener` is called after every JWKS load that dropped members, with their ids. */
  onKeysRemoved(listener: (keyIds: ReadonlySet<string>) => void): void;
  /**
   * When the JWKS held is past its max age and the cooldown allows, a promise of its refresh (never rejects: a failed
   * refresh keeps the old set); otherwise `undefined`, so the common path costs no `await`.
   */
  refreshIfStale(): Promise<void> | undefined;
  /**
   * Start-up check: fetches discovery and the JWKS. A discovery document naming another issuer is a configuration
   * error (`AuthConfigError` on `SVC_AUTH_ISSUER`, both values in the message); an unreachable IdP is
   * `AUTH_IDP_UNAVAILABLE` (`canRetry`).
   */
  start(): Promise<void>;
  stats(): KeySourceStats;
}

interface KeyEntry {
  keyId: string;
  /** A jose resolver over this one member: jose's own selection rules (kty, alg, use, key_ops, kid) decide. */
  resolve: LocalJWKSet;
}

interface Loaded {
  entries: KeyEntry[];
  keyIds: ReadonlySet<string>;
  fetchedAt: number;
}

/** `kid` + RFC 7638 thumbprint: a member replaced under the same `kid` is a different key. */
async function keyIdOf(jwk: JWK): Promise<string> {
  let thumbprint: string;
  try {
    thumbprint = await calculateJwkThumbprint(jwk, "sha256");
  } catch {
    // a member jose cannot thumbprint (unknown kty): identify it by its whole published form
    thumbprint = createHash("sha256").update(JSON.stringify(jwk)).digest("base64url");
  }
  return `${typeof jwk.kid === "string" ? jwk.kid : ""}#${thumbprint}`;
}

/**
 * OIDC discovery + JWKS, cached. Every fetch attempt (success or failure) opens a cooldown window during which no
 * further JWKS fetch is made, so a flood of tokens with unknown `kid`s costs the IdP at most one request per window.
 * After each load, the members that left the set are reported to `onKeysRemoved` listeners (the token cache).
 */
export function createKeySource(options: KeySourceOptions): KeySource {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const stats: KeySourceStats = { discoveryFetches: 0, jwksFetches: 0 };
  const removalListeners: Array<(keyIds: ReadonlySet<string>) => void> = [];
  let jwksUri: string | undefined;
  let loaded: Loaded | undefined;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<Loaded> | undefined;

  /** The JWKS URI from discovery (shared with the process's token source; fetched until it succeeds once). */
  async function discover(): Promise<string> {
    if (jwksUri !== undefined) return jwksUri;
    const doc = await discoveryDocument(options.issuer, {
      timeoutMs,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      onFetch: () => {
        stats.discoveryFetches++;
      },
    });
    if (typeof doc.jwks_uri !== "string" || !/^https?:\/\//.test(doc.jwks_uri)) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", "OIDC discovery has no usable jwks_uri");
    }
    jwksUri = doc.jwks_uri;
    return jwksUri;
  }

  async function load(): Promise<Loaded> {
    lastAttemptAt = now();
    let uri: string;
    try {
      uri = await discover();
    } catch (error) {
      // at request time a misconfigured issuer is an outage of this service (503), reported with its reason
      if (!(error instanceof AuthConfigError)) throw error;
      throw new AuthError("AUTH_IDP_UNAVAILABLE", error.message, { subject: error.subject, cause: error });
    }
    stats.jwksFetches++;
    const jwks = (await getIdpJson(uri, "JWKS", { timeoutMs, fetch: doFetch })) as JSONWebKeySet;
    let entries: KeyEntry[];
    try {
      createLocalJWKSet(jwks); // validates the set as a whole
      entries = await Promise.all(
        jwks.keys.map(async (jwk) => ({ keyId: await keyIdOf(jwk), resolve: createLocalJWKSet({ keys: [jwk] }) })),
      );
    } catch (cause) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", "JWKS is malformed", { cause });
    }
    const previous = loaded;
    loaded = { entries, keyIds: new Set(entries.map((entry) => entry.keyId)), fetchedAt: now() };
    options.logger?.info({ keys: entries.length, jwksUri: uri }, "auth: JWKS loaded");
    const current = loaded.keyIds;
    const removed = new Set([...(previous?.keyIds ?? [])].filter((keyId) => !current.has(keyId)));
    if (removed.size > 0) for (const listener of removalListeners) listener(removed);
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

  const isStale = (set: Loaded) => now() - set.fetchedAt >= maxAgeMs;

  async function current(): Promise<Loaded> {
    if (loaded && !isStale(loaded)) return loaded;
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

  /** The one member that matches `header` (jose's rules); several → jose's `JWKSMultipleMatchingKeys`. */
  async function select(
    set: Loaded,
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<ResolvedKey | undefined> {
    const found: ResolvedKey[] = [];
    for (const entry of set.entries) {
      try {
        found.push({ key: await entry.resolve(header, token), keyId: entry.keyId });
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      }
    }
    if (found.length > 1) throw new errors.JWKSMultipleMatchingKeys();
    return found[0];
  }

  async function resolveKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ResolvedKey> {
    const known = await select(await current(), header, token);
    if (known) return known;
    const pending = refetch();
    const fresh = pending ? await pending.catch(() => undefined) : undefined;
    const found = fresh ? await select(fresh, header, token) : undefined;
    if (found) return found;
    throw new AuthError(
      "AUTH_UNKNOWN_KEY",
      `no key in the issuer's JWKS matches kid ${JSON.stringify(String(header.kid).slice(0, 64))}`,
      { subject: "kid" },
    );
  }

  return {
    getKey: async (header, token) => (await resolveKey(header, token)).key,
    resolveKey,
    holds: (keyId) => loaded?.keyIds.has(keyId) ?? false,
    onKeysRemoved(listener) {
      removalListeners.push(listener);
    },
    refreshIfStale() {
      if (!loaded || !isStale(loaded)) return undefined;
      if (!inFlight && now() - lastAttemptAt < options.cooldownMs) return undefined;
      return current().then(
        () => undefined,
        () => undefined,
      );
    },
    async start() {
      await discover();
      if (loaded) return;
      const pending = refetch();
      if (!pending) {
        throw new AuthError("AUTH_IDP_UNAVAILABLE", "JWKS not loaded and the last attempt failed within the cooldown");
      }
      await pending;
    },
    stats: () => ({ ...stats }),
  };
}
