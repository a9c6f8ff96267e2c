/** Slots of the cache (a power of two): tenants, principals, actions and results of a busy writer fit. */
const SLOTS = 4096;
/** Longer values (rarely repeated) are decoded every time. */
const MAX_BYTES = 128;

/**
 * Decodes plain-ASCII field values that repeat from record to record (tenant, principal, action, result) to the same
 * string each time: one allocation per distinct value instead of one per record, and a string whose hash JavaScript
 * computed once, so the rollups' maps find it without hashing it again (`rollup-counts.ts`). A direct-mapped cache:
 * a slot keeps the last value whose bytes hashed to it; a differing value replaces it.
 */
export class RepeatedStrings {
  private readonly kept: (Uint8Array | undefined)[] = new Array(SLOTS);
  private readonly strings: string[] = new Array(SLOTS);

  /** `b[start..end)` as a latin1 string (the caller knows it is plain ASCII). */
  get(b: Buffer, start: number, end: number): string {
    const length = end - start;
    if (length === 0) return "";
    if (length > MAX_BYTES) return b.toString("latin1", start, end);
    // FNV-1a over every byte: values that differ in one digit (user-12@…, user-13@…) must not share a slot, or they
    // evict each other on every record (a hash of three sampled bytes put 256 bench values in 24 slots).
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i += 1) hash = Math.imul(hash ^ (b[i] as number), 0x01000193);
    const slot = (hash ^ (hash >>> 15)) & (SLOTS - 1);
    const kept = this.kept[slot];
    if (kept !== undefined && kept.length === length) {
      let i = 0;
      while (i < length && kept[i] === b[start + i]) i += 1;
      if (i === length) return this.strings[slot] as string;
    }
    const value = b.toString("latin1", start, end);
    this.kept[slot] = Uint8Array.prototype.slice.call(b, start, end);
    this.strings[slot] = value;
    return value;
  }
}
