/** A buffer handed out in pieces, front to back, until it is given back whole. */
export interface Slab {
  /** `bytes` of the slab not handed out yet, or a new buffer when the rest is too small. */
  alloc(bytes: number): Buffer;
}

class BumpSlab implements Slab {
  #used = 0;
  constructor(readonly buffer: Buffer) {}

  alloc(bytes: number): Buffer {
    if (this.#used + bytes > this.buffer.length) return Buffer.allocUnsafe(bytes);
    const piece = this.buffer.subarray(this.#used, this.#used + bytes);
    this.#used += bytes;
    return piece;
  }

  reset(): void {
    this.#used = 0;
  }
}

/**
 * Memory for the record batches of a send, used again for later sends. A fresh half-MiB buffer per batch is pages
 * the kernel zeroes on first touch, and a profile of the agent put that (in the copy of the lines into the batch)
 * above any other cost of encoding; a slab given back is taken again with its pages in place. At most `keep`
 * slabs wait for reuse; a slab never given back (its send abandoned) is left to the collector.
 */
export class BatchSlabs {
  readonly #free: BumpSlab[] = [];

  constructor(
    private readonly slabBytes: number,
    private readonly keep: number,
  ) {}

  take(): Slab {
    const slab = this.#free.pop();
    if (slab !== undefined) return slab;
    return new BumpSlab(Buffer.allocUnsafe(this.slabBytes));
  }

  /** Gives back a slab from `take` once nothing it handed out is read any more. */
  give(slab: Slab): void {
    if (!(slab instanceof BumpSlab) || this.#free.length >= this.keep) return;
    slab.reset();
    this.#free.push(slab);
  }

  /** Slabs waiting for reuse. */
  get idle(): number {
    return this.#free.length;
  }
}
