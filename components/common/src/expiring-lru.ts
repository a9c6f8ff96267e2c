export interface ExpiringLruOptions {
  /** Entries kept at most; past it the least recently read or set entry goes. 0 disables the cache. */
  maxEntries: number;
  /** Lifetime of an entry `set` without its own expiry; without it, every `set` must name one. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * A bounded map whose entries expire: an entry is served only while `now < expiresAt`, and when full the least
 * recently read or set entry goes. Expired entries are dropped when read (and age out of the order like any other).
 */
export class ExpiringLru<V> {
  /** Insertion order of a Map = recency order: a read moves the entry to the end. */
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  readonly maxEntries: number;
  private readonly ttlMs: number | undefined;
  private readonly now: () => number;

  constructor(options: ExpiringLruOptions) {
    const { maxEntries, ttlMs, now = Date.now } = options;
    if (!(maxEntries >= 0)) throw new RangeError("ExpiringLru: maxEntries must be ≥ 0");
    if (ttlMs !== undefined && !(ttlMs > 0)) throw new RangeError("ExpiringLru: ttlMs must be > 0");
    this.maxEntries = maxEntries;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (this.now() >= entry.expiresAt) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Sets `key` (the most recent entry) until `expiresAt` (epoch ms; default now + `ttlMs`). A value already expired,
   * or a cache of 0 entries, keeps nothing.
   */
  set(key: string, value: V, expiresAt?: number): void {
    const now = this.now();
    const until = expiresAt ?? (this.ttlMs === undefined ? undefined : now + this.ttlMs);
    if (until === undefined) throw new RangeError("ExpiringLru: set without an expiry on a cache without ttlMs");
    if (this.maxEntries <= 0 || now >= until) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: until });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /** Removes `key`; with `value`, only while the entry still holds that value (not a newer one set meanwhile). */
  delete(key: string, value?: V): void {
    if (value !== undefined && this.entries.get(key)?.value !== value) return;
    this.entries.delete(key);
  }

  /** Removes every entry whose value `predicate` picks; returns how many. */
  deleteWhere(predicate: (value: V) => boolean): number {
    let deleted = 0;
    for (const [key, entry] of this.entries) {
      if (predicate(entry.value)) {
        this.entries.delete(key);
        deleted++;
      }
    }
    return deleted;
  }

  clear(): void {
    this.entries.clear();
  }
}
