import { createHash } from "node:crypto";

/** How many leading bytes of a file identify its content (with device and inode: inode reuse is detected). */
export const FINGERPRINT_BYTES = 256;

export interface Fingerprint {
  /** How many leading bytes were hashed (fewer than FINGERPRINT_BYTES while the file is shorter). */
  length: number;
  sha256: string;
}

export function fingerprintOf(head: Buffer): Fingerprint {
  return { length: head.length, sha256: createHash("sha256").update(head).digest("hex") };
}

/**
 * One generation of one source file: its identity (device and inode) and the leading bytes read from it. A
 * truncated file (copytruncate) starts a new generation of the same inode, with its own leading bytes.
 */
export class SourceFile {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  /**
   * The file's last-write time when it was opened (ms; 0 for stdin): every generation rotated away after this one
   * was last written no earlier (a checkpoint keeps it, for a restart that finds the file gone).
   */
  readonly openedMtimeMs: number;
  #head: Buffer;

  constructor(path: string, dev: number, ino: number, head: Buffer = Buffer.alloc(0), openedMtimeMs = 0) {
    this.path = path;
    this.dev = dev;
    this.ino = ino;
    this.openedMtimeMs = openedMtimeMs;
    this.#head = head.subarray(0, FINGERPRINT_BYTES);
  }

  /** `device:inode`, the dead-letter header `file-id`. */
  get id(): string {
    return `${this.dev}:${this.ino}`;
  }

  /** Notes bytes read at `start`, keeping the file's first FINGERPRINT_BYTES. */
  noteRead(start: number, bytes: Buffer): void {
    const have = this.#head.length;
    if (have >= FINGERPRINT_BYTES || start > have || start + bytes.length <= have) return;
    const extra = bytes.subarray(have - start, Math.min(bytes.length, FINGERPRINT_BYTES - start));
    this.#head = Buffer.concat([this.#head, extra]);
  }

  /** The leading bytes read so far, up to min(offset, FINGERPRINT_BYTES) of them. */
  head(offset: number): Buffer {
    return this.#head.subarray(0, Math.min(offset, FINGERPRINT_BYTES));
  }

  /** The fingerprint of what a checkpoint at `offset` covers: the first min(offset, FINGERPRINT_BYTES) bytes. */
  fingerprint(offset: number): Fingerprint {
    return fingerprintOf(this.head(offset));
  }
}
