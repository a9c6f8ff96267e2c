/**
 * Where a batch's JSONL is kept from its first record until its object is durable (docs/audit-storage.md,
 * "Spool"): in the heap (`MemoryBody`) or in a spool file (`SpoolBody`), behind one interface, so the writer reads,
 * checks and PUTs either the same way.
 */
export interface BatchBody {
  /** Bytes appended, newlines included. */
  readonly length: number;
  /** Appends one line: the value, then a newline. Throws `QUEUE_CONSUMER_SPOOL_FAILED` when the spool fails. */
  append(value: Buffer): void;
  /** No more lines: what is still buffered is written out. */
  finish(): void;
  /** CRC-32 (IEEE) of the bytes, unsigned. */
  crc32(): number;
  /** Whether some byte is a backslash (none: no JSON string in the batch has an escape). */
  hasBackslash(): boolean;
  /** What a PUT sends: the bytes, or the spool file (sent from the page cache, never copied into the heap). */
  payload(): Buffer | Blob;
  /** The whole body in one buffer (gzip, a PUT whose signature covers the body's SHA-256, tests). */
  contents(): Buffer;
  /**
   * The lines read a few at a time, `lineLengths` giving each line's length without its newline: the writer encodes
   * a batch's index rows in slices and lets its event loop run between them (`readIndexFieldsInSlices`). Close it
   * when done; `forEachLine` reads them all at once.
   */
  lines(lineLengths: Uint32Array): LineReader;
  /** Whether the bytes are gone from under it (a spool file deleted): no PUT of it can succeed. */
  lost(): boolean;
  /** The body is no longer needed (its object is durable, or the batch was dropped). */
  discard(): void;
}

/** What receives each line: `buffer[start, end)`, which starts at `byteStart` of the body. */
export type OnLine = (buffer: Buffer, start: number, end: number, byteStart: number) => void;

/** A body's lines in order, read `count` at a time. */
export interface LineReader {
  /** Calls `onLine` for the next lines, at most `count`; answers how many lines are left unread. */
  read(count: number, onLine: OnLine): number;
  /** Frees what the reading holds (a spool file's descriptor); the reader reads nothing after it. */
  close(): void;
}

/**
 * Calls `onLine(buffer, start, end, byteStart)` for each line of `body` in order, `lineLengths` giving each line's
 * length without its newline: the line is `buffer[start, end)` and starts at `byteStart` of the body. `buffer` may be
 * reused for the next lines: what is kept of it must be copied out.
 */
export function forEachLine(body: BatchBody, lineLengths: Uint32Array, onLine: OnLine): void {
  const reader = body.lines(lineLengths);
  try {
    reader.read(lineLengths.length, onLine);
  } finally {
    reader.close();
  }
}

/** Capacity of a memory body when the caller gives none; it doubles as lines arrive. */
const DEFAULT_CAPACITY = 1024 * 1024;

/**
 * A body in one heap buffer of `capacity` bytes (pages are only taken as lines are written into it), moved to one
 * twice as large when it outgrows it.
 */
export class MemoryBody implements BatchBody {
  private buffer: Buffer;
  length = 0;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** A body over `jsonl` as it is (not copied): lines each ending in a newline, as `append` would have made them. */
  static of(jsonl: Buffer): MemoryBody {
    const body = new MemoryBody(0);
    body.buffer = jsonl;
    body.length = jsonl.length;
    return body;
  }

  append(value: Buffer): void {
    const need = value.length + 1;
    if (this.buffer.length - this.length < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.buffer.length, this.length + need));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    value.copy(this.buffer, this.length);
    this.buffer[this.length + value.length] = 0x0a;
    this.length += need;
  }

  finish(): void {}

  crc32(): number {
    return Bun.hash.crc32(this.contents()) >>> 0;
  }

  hasBackslash(): boolean {
    return this.contents().includes(0x5c);
  }

  payload(): Buffer {
    return this.contents();
  }

  contents(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  lines(lineLengths: Uint32Array): LineReader {
    let line = 0;
    let start = 0;
    return {
      read: (count, onLine) => {
        const end = Math.min(lineLengths.length, line + count);
        for (; line < end; line += 1) {
          const length = lineLengths[line] as number;
          onLine(this.buffer, start, start + length, start);
          start += length + 1;
        }
        return lineLengths.length - line;
      },
      close: () => {
        line = lineLengths.length;
      },
    };
  }

  lost(): boolean {
    return false;
  }

  discard(): void {}
}
