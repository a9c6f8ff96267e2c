import { createHash } from "node:crypto";

/** SHA-256 of the raw token, hex: the cache key (the token itself is never kept). */
export const tokenDigest = (token: string): string => createHash("sha256").update(token).digest("hex");

export interface TokenCacheEntry<T> {
  value: T;
  /** Epoch ms after which the entry is dead (the token's `exp`, never later). */
  expiresAt: number;
}

/**
 * Bounded LRU of verified tokens by digest. An entry is served only while `now < expiresAt`; inserting beyond
 * `maxEntries` evicts the least recently used entry. `maxEntries = 0` disables the cache.
 */
export class TokenCache<T> {
  private readonly entries = new Map<string, TokenCacheEntry<T>>();

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(digest: string): T | undefined {
    const entry = this.entries.get(digest);
    if (!entry) return undefined;
    this.entries.delete(digest);
    if (this.now() >= entry.expiresAt) return undefined;
    this.entries.set(digest, entry);
    return entry.value;
  }

  set(digest: string, value: T, expiresAt: number): void {
    if (this.maxEntries <= 0 || this.now() >= expiresAt) return;
    this.entries.delete(digest);
    this.entries.set(digest, { value, expiresAt });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /** Removes every entry whose value `predicate` picks (e.g. tokens verified by a key the IdP removed); returns how many. */
  deleteWhere(predicate: (value: T) => boolean): number {
    let deleted = 0;
    for (const [digest, entry] of this.entries) {
      if (predicate(entry.value)) {
        this.entries.delete(digest);
        deleted++;
      }
    }
    return deleted;
  }

  clear(): void {
    this.entries.clear();
  }
}
