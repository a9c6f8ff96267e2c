/**
 * Values made once per distinct byte range and found again by the bytes alone, without decoding them: a
 * direct-mapped cache (a slot keeps the last range whose bytes hashed to it; a differing one replaces it). For field
 * values that repeat from record to record on a hot path — the agent's tenant keys, the writer's tenants, principals,
 * actions and results — where a string per record, and hashing it again in a `Map`, cost more than the field.
 *
 * The slot is FNV-1a over every byte: a hash of a few sampled bytes put 256 values that differ in one digit
 * (`user-12@…`, `user-13@…`) in 24 slots, so they evicted each other on nearly every record.
 */
export class ByteSlots<T> {
  readonly #kept: (Uint8Array | undefined)[];
  readonly #values: T[];
  readonly #mask: number;

  /** `slots`: a power of two; ranges longer than `maxBytes` (rarely repeated) are made every time. */
  constructor(
    slots: number,
    private readonly maxBytes = 128,
  ) {
    if (!Number.isInteger(Math.log2(slots))) throw new RangeError(`slots must be a power of two, not ${slots}`);
    this.#kept = new Array(slots);
    this.#values = new Array(slots);
    this.#mask = slots - 1;
  }

  /** The value of `b[start..end)`: kept, or `make(its latin1 text)`, then kept. */
  get(b: Buffer, start: number, end: number, make: (text: string) => T): T {
    const length = end - start;
    if (length > this.maxBytes) return make(b.toString("latin1", start, end));
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i += 1) hash = Math.imul(hash ^ (b[i] as number), 0x01000193);
    const slot = (hash ^ (hash >>> 15)) & this.#mask;
    const kept = this.#kept[slot];
    if (kept !== undefined && kept.length === length) {
      let i = 0;
      while (i < length && kept[i] === b[start + i]) i += 1;
      if (i === length) return this.#values[slot] as T;
    }
    const value = make(b.toString("latin1", start, end));
    // A copy (Buffer#slice is a view): the caller's buffer is reused for other bytes.
    this.#kept[slot] = Uint8Array.prototype.slice.call(b, start, end);
    this.#values[slot] = value;
    return value;
  }
}
