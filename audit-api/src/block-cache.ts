import { decodeGzipBody } from "@svc/common";
import type { DiskBlocks } from "./disk-blocks.ts";
import type { ByteRange, VersionReader } from "./version-reader.ts";

/** The size of a block: a page of 100 lines of ~400 bytes falls in one or two. */
export const BLOCK_BYTES = 128 * 1024;

/**
 * Blocks read by one GET on a miss when there is a disk tier (1 MiB of 128 KiB blocks): MinIO reads and checks a
 * whole 1 MiB erasure block for any range in it (0.85 ms of its CPU for 4 KiB, 1.54 ms for 1 MiB, measured on the
 * local stack), and S3 bills per request.
 */
export const EXTENT_BLOCKS = 8;

/** The runs `[start, end)` of adjacent entries of `items` that are undefined, in order. */
function missingRuns(items: readonly unknown[]): [number, number][] {
  const runs: [number, number][] = [];
  for (let start = 0; start < items.length; ) {
    if (items[start] !== undefined) {
      start++;
      continue;
    }
    let end = start;
    while (end < items.length && items[end] === undefined) end++;
    runs.push([start, end]);
    start = end;
  }
  return runs;
}

/** One cached block: its bytes once read (shared by concurrent readers while the GET runs). */
interface Block {
  bytes: Promise<Uint8Array>;
  /** Bytes counted against the budget (the block size until read, then its length). */
  size: number;
}

/**
 * Aligned blocks of object versions kept in memory, least recently used dropped first: object versions never change
 * (Object Lock, and a version id names one content), so a block read once answers every later page that lies in it
 * without a GET — on the local stack MinIO spent more CPU per list call (about 2 ms for one ranged GET) than the API
 * process itself. A read fetches its missing blocks with one ranged GET per run of adjacent ones. Only lists read
 * through it: an export streams ranges it will not read again, and would push the pages' blocks out.
 *
 * A gzip object version cannot be read by range: `whole` keeps it decoded as one entry under the same budget, so
 * the pages (or export steps) that fall in it share one GET and one decode instead of one each.
 *
 * With `disk` (disk-blocks.ts), a block missing from memory is looked for there before it is read from S3, and a
 * block read from S3 is offered to it: a store larger than memory then costs each block one GET, not one per page
 * that falls in it (gzip objects' decoded wholes stay in memory only).
 */
export class BlockCache {
  /** Insertion order of a Map = recency order: a hit moves the block to the end. */
  private readonly blocks = new Map<string, Block>();
  private held = 0;

  constructor(
    private readonly reader: VersionReader,
    private readonly maxBytes: number,
    readonly blockBytes = BLOCK_BYTES,
    private readonly disk?: DiskBlocks,
  ) {
    if (!(maxBytes > 0) || !(blockBytes > 0)) throw new RangeError("BlockCache: maxBytes and blockBytes must be > 0");
    if (disk && disk.blockBytes < blockBytes) throw new RangeError("BlockCache: the disk tier's blocks are smaller");
  }

  /** Bytes held (blocks read or being read). */
  get bytes(): number {
    return this.held;
  }

  private hit(id: string): Block | undefined {
    const block = this.blocks.get(id);
    if (!block) return undefined;
    this.blocks.delete(id);
    this.blocks.set(id, block);
    return block;
  }

  private insert(id: string, block: Block): void {
    this.blocks.set(id, block);
    this.held += block.size;
    this.trim(id);
  }

  /** Drops the least recently used entries until the budget holds; `keep` (the newest) stays even when larger. */
  private trim(keep: string): void {
    for (const [oldest, old] of this.blocks) {
      if (this.held <= this.maxBytes || oldest === keep) break;
      this.drop(oldest, old);
    }
  }

  /** A gzip object version, read whole and decoded (`VersionReader.read`'s failures; a failed read is not kept). */
  whole(bucket: string, key: string, versionId: string): Promise<Uint8Array> {
    const id = `${bucket}\u0000${key}\u0000${versionId}\u0000whole`;
    const kept = this.hit(id);
    if (kept) return kept.bytes;
    // Its size is known once decoded: counted (and the budget enforced) then.
    const entry: Block = { bytes: this.reader.read(bucket, key, versionId).then(decodeGzipBody), size: 0 };
    this.insert(id, entry);
    entry.bytes.then(
      (decoded) => {
        if (this.blocks.get(id) !== entry) return;
        this.held += decoded.length;
        entry.size = decoded.length;
        this.trim(id);
      },
      () => this.drop(id, entry),
    );
    return entry.bytes;
  }

  private drop(id: string, block: Block): void {
    if (this.blocks.get(id) !== block) return;
    this.blocks.delete(id);
    this.held -= block.size;
  }

  /**
   * Blocks `[from, to)` of a version, each whole (the object's last one may be short): those the disk tier holds from
   * it, each run of the others with one GET. With a disk tier, a run's GET covers the aligned extents of
   * `EXTENT_BLOCKS` around it and every block of them goes to disk (only the run's to memory): a store read cold
   * then costs one GET per MiB, not per block.
   */
  private async fetchBlocks(
    bucket: string,
    key: string,
    versionId: string,
    from: number,
    to: number,
  ): Promise<Uint8Array[]> {
    const size = this.blockBytes;
    const idOf = (block: number) => `${bucket}\u0000${key}\u0000${versionId}\u0000${size}:${block}`;
    const disk = this.disk;
    const out: (Uint8Array | undefined)[] = disk
      ? await Promise.all(Array.from({ length: to - from }, (_, k) => disk.get(idOf(from + k))))
      : new Array(to - from);
    const extent = disk ? EXTENT_BLOCKS : 1;
    const gets: Promise<void>[] = [];
    for (const [a, b] of missingRuns(out)) {
      // Blocks [first, last) of the version: the run, widened to whole extents (a GET past the object's end answers
      // up to its end).
      const first = Math.floor((from + a) / extent) * extent;
      const last = Math.ceil((from + b) / extent) * extent;
      const [runFirst, runEnd] = [from + a, from + b];
      gets.push(
        this.reader.read(bucket, key, versionId, { start: first * size, end: last * size }).then((all) => {
          for (let block = first; block < last; block++) {
            const offset = (block - first) * size;
            const part = all.subarray(offset, offset + size);
            if (block >= runFirst && block < runEnd) {
              // A GET of one block is that block (no copy); a longer one is cut into copies, so that a block dropped
              // frees its bytes instead of keeping the whole GET's buffer alive under a budget that counts blocks.
              // A block past the object's end is empty: the reader reports the short read.
              out[block - from] = last - first === 1 ? all : part.slice();
            }
            if (part.length > 0) disk?.put(idOf(block), part);
          }
        }),
      );
    }
    await Promise.all(gets);
    return out as Uint8Array[];
  }

  /** Bytes `range` of a version (`VersionReader.read`'s failures; a failed block is not kept). */
  async read(bucket: string, key: string, versionId: string, range: ByteRange): Promise<Uint8Array> {
    const size = this.blockBytes;
    const first = Math.floor(range.start / size);
    const last = Math.floor((range.end - 1) / size);
    const prefix = `${bucket}\u0000${key}\u0000${versionId}\u0000`;
    const parts: (Promise<Uint8Array> | undefined)[] = [];
    for (let b = first; b <= last; b++) parts.push(this.hit(`${prefix}${b}`)?.bytes);
    // Each run of adjacent missing blocks: read together (from disk, else one GET per run still missing).
    for (const [i, j] of missingRuns(parts)) {
      const fetched = this.fetchBlocks(bucket, key, versionId, first + i, first + j);
      /** Each block of the run: its id and its place in the run. */
      const blocks: { id: string; block: Block; at: number }[] = [];
      for (let k = i; k < j; k++) {
        const at = k - i;
        const block: Block = { bytes: fetched.then((all) => all[at] as Uint8Array), size };
        block.bytes.catch(() => {}); // the reader awaits it below
        blocks.push({ id: `${prefix}${first + k}`, block, at });
        parts[k] = block.bytes;
      }
      for (const { id, block } of blocks) this.insert(id, block);
      fetched.then(
        (all) => {
          for (const { id, block, at } of blocks) {
            const length = (all[at] as Uint8Array).length;
            if (this.blocks.get(id) === block) this.held += length - block.size;
            block.size = length;
          }
        },
        () => {
          for (const { id, block } of blocks) this.drop(id, block);
        },
      );
    }
    const blocks = await Promise.all(parts as Promise<Uint8Array>[]);
    const offset = range.start - first * size;
    const length = range.end - range.start;
    if (blocks.length === 1) return (blocks[0] as Uint8Array).subarray(offset, offset + length);
    // Across blocks: only the range's bytes are copied (a block may end short: the object's last one).
    const joined = new Uint8Array(length);
    let at = 0;
    for (let i = 0; i < blocks.length && at < length; i++) {
      const block = blocks[i] as Uint8Array;
      const part = block.subarray(i === 0 ? offset : 0, (i === 0 ? offset : 0) + (length - at));
      joined.set(part, at);
      at += part.length;
    }
    return joined.subarray(0, at);
  }
}
