import { createHash } from "node:crypto";
import { ExpiringLru } from "@svc/common";

/** SHA-256 of the raw token, hex: the cache key (the token itself is never kept). */
export const tokenDigest = (token: string): string => createHash("sha256").update(token).digest("hex");

/**
 * Bounded LRU of verified tokens by digest (`ExpiringLru` of @svc/common). An entry is served only while
 * `now < expiresAt` (the token's `exp`, never later); inserting beyond `maxEntries` evicts the least recently used
 * entry. `maxEntries = 0` disables the cache.
 */
export class TokenCache<T> extends ExpiringLru<T> {
  constructor(maxEntries: number, now: () => number = Date.now) {
    super({ maxEntries, now });
  }

  override set(digest: string, value: T, expiresAt: number): void {
    super.set(digest, value, expiresAt);
  }
}
