import { createHash } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { AuditApiError } from "./errors.ts";

/** "SVB2": the first four bytes of every slot in use. */
const MAGIC = 0x5356_4232;
/** magic, data length, CRC-32 of the data (each u32, big-endian), then the SHA-256 of the block's id. */
const HEADER_BYTES = 44;
/**
 * Blocks written at once (8 MiB of buffers at 128 KiB): a miss offers a whole extent of 8; a block arriving while
 * they run is not kept (the next miss offers it again).
 */
export const DISK_WRITES_AT_ONCE = 64;
/** The least time between two reports of failures (a full disk would otherwise report every miss). */
const REPORT_EVERY_MS = 60_000;
const SLAB_NAME = /^blocks-\d+\.slab$/;

/** What the disk tier has done since it opened. */
export interface DiskBlocksStats {
  hits: number;
  misses: number;
  written: number;
  /** Blocks offered while `DISK_WRITES_AT_ONCE` writes ran. */
  skipped: number;
  /** Slots that could not be written, or were found damaged on reading (and freed). */
  failures: number;
}

/** A slot holding a block: its number and the bytes its header and data take. */
interface NamedSlot {
  slot: number;
  bytes: number;
}

/** Failures since the last report, and the last one's error. */
export type DiskFailureReport = (failures: number, last: Error) => void;

export interface DiskBlocksOptions {
  /** Disk for the slab: whole slots of `HEADER_BYTES + blockBytes` (at least one). */
  maxBytes: number;
  /** The largest block kept (the memory cache's block size). */
  blockBytes: number;
  report: DiskFailureReport;
}

function fail(dir: string, cause: unknown): AuditApiError {
  return new AuditApiError(
    "AUDIT_API_DISK_CACHE_FAILED",
    `SVC_AUDIT_API_DISK_CACHE_DIR: cannot use ${dir} for the block cache: ${(cause as Error).message}`,
    { subject: "SVC_AUDIT_API_DISK_CACHE_DIR", cause },
  );
}

/** The SHA-256 of a block's id: its name in the slab. */
function digestOf(id: string): Buffer {
  return createHash("sha256").update(id).digest();
}

/**
 * Blocks of object versions kept on disk by this process, least recently used replaced first: the tier behind the
 * memory `BlockCache`, so that a store larger than its memory is read from S3 once per block rather than once per
 * page (object versions never change, so a block never goes stale), and kept across a restart.
 *
 * One preallocated (sparse) file of fixed slots, `blocks-<block size>.slab`: a slot holds a header (magic, length,
 * CRC-32, the SHA-256 of the block's id) and the bytes, written with one positioned write — a file per block cost
 * 4× the CPU in creating and renaming it. Which slot holds which block is kept in memory and rebuilt at start from
 * the slots' headers. A read checks the header against the id asked for and the CRC against the bytes: a slot that
 * fails (a torn write after a crash, a bad sector) is freed, counted, and its block is read from S3. A slot is named
 * to readers only once written; a reader that raced its reuse for another block sees another id and takes it as a
 * miss. A failed write is counted and reported (at most once a minute) and never fails a read: the tier is a cache.
 * One directory serves one process (a pod's `emptyDir`).
 */
export class DiskBlocks {
  /** Id digest (hex) → its slot; insertion order of a Map = recency order (a hit moves it to the end). */
  private readonly slots = new Map<string, NamedSlot>();
  /** Slots holding nothing, lowest last (taken with pop, so the file fills from its start). */
  private readonly free: number[] = [];
  private held = 0;
  private readonly pending = new Map<string, Promise<void>>();
  private unreported = 0;
  private lastReport = 0;
  private closed = false;
  readonly stats: DiskBlocksStats = { hits: 0, misses: 0, written: 0, skipped: 0, failures: 0 };

  private constructor(
    private readonly file: FileHandle,
    readonly path: string,
    readonly blockBytes: number,
    private readonly slotBytes: number,
    private readonly report: DiskFailureReport,
  ) {}

  /**
   * The tier in `dir` (created when missing): its slab sized to `maxBytes` (slabs of another block size removed), the
   * blocks its slots hold from an earlier run named again. A directory or slab that cannot be created, read or
   * written is `AUDIT_API_DISK_CACHE_FAILED`, naming SVC_AUDIT_API_DISK_CACHE_DIR.
   */
  static async open(dir: string, options: DiskBlocksOptions): Promise<DiskBlocks> {
    const { maxBytes, blockBytes, report } = options;
    const slotBytes = HEADER_BYTES + blockBytes;
    const count = Math.floor(maxBytes / slotBytes);
    if (!(blockBytes > 0) || count < 1) throw new RangeError("DiskBlocks: maxBytes must hold one slot of blockBytes");
    const name = `blocks-${blockBytes}.slab`;
    const path = join(dir, name);
    let file: FileHandle | undefined;
    try {
      await mkdir(dir, { recursive: true });
      for (const entry of await readdir(dir)) {
        if (SLAB_NAME.test(entry) && entry !== name) await rm(join(dir, entry), { force: true });
      }
      file = await open(path, "r+").catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
        return open(path, "w+");
      });
      if ((await stat(path)).size !== count * slotBytes) await file.truncate(count * slotBytes);
      const blocks = new DiskBlocks(file, path, blockBytes, slotBytes, report);
      blocks.scan(count);
      return blocks;
    } catch (cause) {
      await file?.close().catch(() => {});
      throw fail(dir, cause);
    }
  }

  /** Names the slots whose headers are whole (start-up, before any read or write: synchronous, 44 bytes a slot). */
  private scan(count: number): void {
    const fd = openSync(this.path, "r");
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      for (let slot = count - 1; slot >= 0; slot--) {
        const read = readSync(fd, head, 0, HEADER_BYTES, slot * this.slotBytes);
        const length = head.readUInt32BE(4);
        if (read === HEADER_BYTES && head.readUInt32BE(0) === MAGIC && length <= this.blockBytes) {
          const key = head.subarray(12).toString("hex");
          if (!this.slots.has(key)) {
            this.name(key, { slot, bytes: HEADER_BYTES + length });
            continue;
          }
        }
        this.free.push(slot);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Bytes of the blocks kept (headers included). */
  get bytes(): number {
    return this.held;
  }

  /** Blocks kept. */
  get count(): number {
    return this.slots.size;
  }

  /** Where the block `id` is in the slab file, when kept (diagnostics, tests). */
  offsetOf(id: string): number | undefined {
    const named = this.slots.get(digestOf(id).toString("hex"));
    return named === undefined ? undefined : named.slot * this.slotBytes;
  }

  /** The block's bytes when a whole, undamaged slot holds them; undefined otherwise (read it from S3). */
  async get(id: string): Promise<Uint8Array | undefined> {
    const digest = digestOf(id);
    const key = digest.toString("hex");
    const named = this.slots.get(key);
    if (named === undefined || this.closed) {
      this.stats.misses++;
      return undefined;
    }
    this.slots.delete(key);
    this.slots.set(key, named);
    const { slot } = named;
    const buffer = Buffer.allocUnsafe(this.slotBytes);
    let read: number;
    try {
      ({ bytesRead: read } = await this.file.read(buffer, 0, this.slotBytes, slot * this.slotBytes));
    } catch (error) {
      return this.damaged(key, named, error);
    }
    const length = buffer.readUInt32BE(4);
    const whole =
      read >= HEADER_BYTES &&
      buffer.readUInt32BE(0) === MAGIC &&
      length <= read - HEADER_BYTES &&
      buffer.subarray(12, HEADER_BYTES).equals(digest);
    const data = buffer.subarray(HEADER_BYTES, HEADER_BYTES + length);
    if (!whole || Bun.hash.crc32(data) !== buffer.readUInt32BE(8)) {
      // Not damage when the slot was given to another block while this read ran.
      if (this.slots.get(key) !== named) {
        this.stats.misses++;
        return undefined;
      }
      return this.damaged(key, named, new Error(`${this.path}: slot ${slot} does not hold its block whole`));
    }
    this.stats.hits++;
    return data;
  }

  private damaged(key: string, named: NamedSlot, error: unknown): undefined {
    if (this.slots.get(key) === named) {
      this.unname(key, named);
      this.free.push(named.slot);
    }
    this.stats.misses++;
    this.failed(error);
    return undefined;
  }

  /** Keeps `bytes` as the block `id` (in the background; a failure is counted and reported, not thrown). */
  put(id: string, bytes: Uint8Array): void {
    if (bytes.length > this.blockBytes) throw new RangeError(`DiskBlocks: a block of ${bytes.length} bytes`);
    const digest = digestOf(id);
    const key = digest.toString("hex");
    if (this.closed || this.slots.has(key) || this.pending.has(key)) return;
    if (this.pending.size >= DISK_WRITES_AT_ONCE) {
      this.stats.skipped++;
      return;
    }
    const slot = this.take();
    const writing = this.write(key, digest, slot, bytes).finally(() => this.pending.delete(key));
    this.pending.set(key, writing);
  }

  /** A free slot, else the least recently used one's (its block is no longer named). */
  private take(): number {
    const free = this.free.pop();
    if (free !== undefined) return free;
    const [key, named] = this.slots.entries().next().value as [string, NamedSlot];
    this.unname(key, named);
    return named.slot;
  }

  private name(key: string, named: NamedSlot): void {
    this.slots.set(key, named);
    this.held += named.bytes;
  }

  private unname(key: string, named: NamedSlot): void {
    this.slots.delete(key);
    this.held -= named.bytes;
  }

  private async write(key: string, digest: Buffer, slot: number, bytes: Uint8Array): Promise<void> {
    const buffer = Buffer.allocUnsafe(HEADER_BYTES + bytes.length);
    buffer.writeUInt32BE(MAGIC, 0);
    buffer.writeUInt32BE(bytes.length, 4);
    buffer.writeUInt32BE(Bun.hash.crc32(bytes), 8);
    digest.copy(buffer, 12);
    buffer.set(bytes, HEADER_BYTES);
    try {
      const { bytesWritten } = await this.file.write(buffer, 0, buffer.length, slot * this.slotBytes);
      if (bytesWritten !== buffer.length) throw new Error(`${this.path}: short write (${bytesWritten} bytes)`);
    } catch (error) {
      this.free.push(slot);
      this.failed(error);
      return;
    }
    this.name(key, { slot, bytes: buffer.length });
    this.stats.written++;
  }

  /** Resolves when the writes begun so far have ended (each kept, or counted as failed). */
  async idle(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  /** Waits for the writes begun, then closes the slab; later reads miss and later blocks are not kept. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.idle();
    await this.file.close();
  }

  private failed(error: unknown): void {
    this.stats.failures++;
    this.unreported++;
    const now = Date.now();
    if (now - this.lastReport < REPORT_EVERY_MS) return;
    this.lastReport = now;
    const failures = this.unreported;
    this.unreported = 0;
    this.report(failures, error instanceof Error ? error : new Error(String(error)));
  }
}
