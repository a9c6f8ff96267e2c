import { closeSync, existsSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";
import type { BatchBody, LineReader, OnLine } from "./batch-body.ts";
import { QueueConsumerError } from "./errors.ts";

/** Lines are gathered in a buffer of this size and written to the file when it is full. */
const STAGE_BYTES = 256 * 1024;
/** The file is read back (for the index fields) this many bytes at a time, whole lines each. */
const READ_BYTES = 1024 * 1024;

function spoolFailed(path: string, action: string, error: unknown): QueueConsumerError {
  if (error instanceof QueueConsumerError) return error;
  return new QueueConsumerError(
    "QUEUE_CONSUMER_SPOOL_FAILED",
    `spool file ${path}: cannot ${action}: ${(error as Error).message}`,
    { subject: path, cause: error },
  );
}

/**
 * A batch's body in a spool file (docs/audit-storage.md, "Spool"): the lines pass through a 256 KiB buffer into
 * the file, whose pages stay in the kernel's page cache instead of the heap, and the PUT sends the file. The
 * file is created at the first line; its CRC-32 and whether it holds a backslash are kept as it is written.
 */
export class SpoolBody implements BatchBody {
  private fd = -1;
  private stage: Buffer | undefined;
  private staged = 0;
  private crc = 0;
  private backslash = false;
  length = 0;

  constructor(readonly path: string) {}

  append(value: Buffer): void {
    const need = value.length + 1;
    this.stage ??= Buffer.allocUnsafeSlow(STAGE_BYTES);
    if (STAGE_BYTES - this.staged < need) this.flush();
    if (need > STAGE_BYTES) {
      this.writeOut(value);
    } else {
      value.copy(this.stage, this.staged);
      this.staged += value.length;
    }
    this.stage[this.staged] = 0x0a;
    this.staged += 1;
    this.length += need;
  }

  finish(): void {
    this.flush();
    this.stage = undefined;
    if (this.fd >= 0) {
      const fd = this.fd;
      this.fd = -1;
      try {
        closeSync(fd);
      } catch (error) {
        throw spoolFailed(this.path, "close", error);
      }
    }
  }

  crc32(): number {
    return this.crc >>> 0;
  }

  hasBackslash(): boolean {
    return this.backslash;
  }

  payload(): Blob {
    return Bun.file(this.path);
  }

  contents(): Buffer {
    try {
      return readFileSync(this.path);
    } catch (error) {
      throw spoolFailed(this.path, "read", error);
    }
  }

  lines(lineLengths: Uint32Array): LineReader {
    return new SpoolLineReader(this.path, this.length, lineLengths);
  }

  lost(): boolean {
    return !existsSync(this.path);
  }

  discard(): void {
    this.stage = undefined;
    if (this.fd >= 0) closeQuietly(this.fd);
    this.fd = -1;
    try {
      unlinkSync(this.path);
    } catch {
      // No file (nothing was written), or already gone: nothing to free.
    }
  }

  private flush(): void {
    if (this.staged === 0 || this.stage === undefined) return;
    this.writeOut(this.stage.subarray(0, this.staged));
    this.staged = 0;
  }

  private writeOut(bytes: Buffer): void {
    try {
      if (this.fd < 0) this.fd = openSync(this.path, "wx", 0o600);
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
    } catch (error) {
      throw spoolFailed(this.path, "write", error);
    }
    this.crc = Bun.hash.crc32(bytes, this.crc);
    if (!this.backslash && bytes.includes(0x5c)) this.backslash = true;
  }
}

/** Closes `fd`, ignoring a failure: the file is only read, or being dropped; nothing of it is lost. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // EBADF/EIO on close: nothing to do.
  }
}

/**
 * A spool file's lines read forward through one buffer of `READ_BYTES` (reused slice after slice), whole lines at a
 * time: a line longer than the buffer gets a buffer of its own. The file is opened at the first read.
 */
class SpoolLineReader implements LineReader {
  #fd = -1;
  #buffer: Buffer | undefined;
  #bufferAt = 0;
  #filled = 0;
  #at = 0;
  #line = 0;

  constructor(
    private readonly path: string,
    private readonly length: number,
    private readonly lineLengths: Uint32Array,
  ) {}

  read(count: number, onLine: OnLine): number {
    const lengths = this.lineLengths;
    const end = Math.min(lengths.length, this.#line + count);
    if (this.#line < end && this.#fd < 0) {
      try {
        this.#fd = openSync(this.path, "r");
      } catch (error) {
        throw spoolFailed(this.path, "read", error);
      }
    }
    let buffer = this.#buffer ?? Buffer.allocUnsafeSlow(READ_BYTES);
    this.#buffer = buffer;
    for (; this.#line < end; this.#line += 1) {
      const length = lengths[this.#line] as number;
      const at = this.#at;
      if (at + length > this.#bufferAt + this.#filled) {
        if (length > buffer.length) {
          buffer = Buffer.allocUnsafeSlow(length);
          this.#buffer = buffer;
        }
        this.#bufferAt = at;
        this.#filled = readAt(this.path, this.#fd, buffer, Math.min(buffer.length, this.length - at), at);
        if (this.#filled < length) {
          const short = new Error(`the file ends at ${at + this.#filled}, within a line of ${length} bytes at ${at}`);
          throw spoolFailed(this.path, "read", short);
        }
      }
      // The callback's own errors pass through as they are: they are not the spool's.
      onLine(buffer, at - this.#bufferAt, at - this.#bufferAt + length, at);
      this.#at = at + length + 1;
    }
    return lengths.length - this.#line;
  }

  close(): void {
    this.#line = this.lineLengths.length;
    this.#buffer = undefined;
    if (this.#fd >= 0) closeQuietly(this.#fd);
    this.#fd = -1;
  }
}

/** Reads up to `want` bytes at `position` of `fd` into the start of `buffer`; fewer only at the end of the file. */
function readAt(path: string, fd: number, buffer: Buffer, want: number, position: number): number {
  let done = 0;
  try {
    while (done < want) {
      const got = readSync(fd, buffer, done, want - done, position + done);
      if (got === 0) break;
      done += got;
    }
  } catch (error) {
    throw spoolFailed(path, "read", error);
  }
  return done;
}
