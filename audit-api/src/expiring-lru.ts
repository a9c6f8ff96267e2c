/**
 * A bounded map whose entries expire `ttlMs` after they were set; when full, the least recently read or set entry
 * goes. Expired entries are dropped when read (and age out of the order like any other).
 */
export class ExpiringLru<V> {
  /** Insertion order of a Map = recency order: a read moves the entry to the end. */
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly capacity: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(capacity >= 1) || !(ttlMs > 0)) throw new RangeError("ExpiringLru: capacity ≥ 1 and ttlMs > 0");
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Removes `key`; with `value`, only while the entry still holds that value (not a newer one set meanwhile). */
  delete(key: string, value?: V): void {
    if (value !== undefined && this.entries.get(key)?.value !== value) return;
    this.entries.delete(key);
  }
}
