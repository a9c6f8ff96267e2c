import { decodeGzipBody } from "./gzip-body.ts";
import type { ByteRange, VersionReader } from "./version-reader.ts";

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
 */
export class BlockCache {
  /** Insertion order of a Map = recency order: a hit moves the block to the end. */
  private readonly blocks = new Map<string, Block>();
  private held = 0;

  constructor(
    private readonly reader: VersionReader,
    private readonly maxBytes: number,
    readonly blockBytes = 128 * 1024,
  ) {
    if (!(maxBytes > 0) || !(blockBytes > 0)) throw new RangeError("BlockCache: maxBytes and blockBytes must be > 0");
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

  /** Bytes `range` of a version (`VersionReader.read`'s failures; a failed block is not kept). */
  async read(bucket: string, key: string, versionId: string, range: ByteRange): Promise<Uint8Array> {
    const size = this.blockBytes;
    const first = Math.floor(range.start / size);
    const last = Math.floor((range.end - 1) / size);
    const prefix = `${bucket}\u0000${key}\u0000${versionId}\u0000`;
    const parts: (Promise<Uint8Array> | undefined)[] = [];
    for (let b = first; b <= last; b++) parts.push(this.hit(`${prefix}${b}`)?.bytes);
    // Each run of adjacent missing blocks: one GET, cut into blocks.
    for (let i = 0; i < parts.length; ) {
      if (parts[i]) {
        i++;
        continue;
      }
      let j = i;
      while (j < parts.length && !parts[j]) j++;
      const fetched = this.reader.read(bucket, key, versionId, { start: (first + i) * size, end: (first + j) * size });
      /** Each block of the run: its id and where it starts in the GET's bytes. */
      const blocks: { id: string; block: Block; offset: number }[] = [];
      // A GET of one block is that block (no copy); a longer one is cut into copies, so that a block dropped frees
      // its bytes instead of keeping the whole GET's buffer alive under a budget that counts blocks.
      const cut = j - i === 1 ? (all: Uint8Array) => all : (all: Uint8Array, at: number) => all.slice(at, at + size);
      for (let k = i; k < j; k++) {
        const offset = (k - i) * size;
        const block: Block = { bytes: fetched.then((all) => cut(all, offset)), size };
        block.bytes.catch(() => {}); // the reader awaits it below
        blocks.push({ id: `${prefix}${first + k}`, block, offset });
        parts[k] = block.bytes;
      }
      for (const { id, block } of blocks) this.insert(id, block);
      fetched.then(
        (all) => {
          for (const { id, block, offset } of blocks) {
            const length = Math.max(0, Math.min(size, all.length - offset));
            if (this.blocks.get(id) === block) this.held += length - block.size;
            block.size = length;
          }
        },
        () => {
          for (const { id, block } of blocks) this.drop(id, block);
        },
      );
      i = j;
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
