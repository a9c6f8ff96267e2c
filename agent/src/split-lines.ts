/** One line of the source, without its newline, with its place in the source. */
export interface SourceLine {
  /** The line's bytes, cut to `maxLineBytes` when `tooLarge`. */
  bytes: Buffer;
  /** Byte offset of the line's first byte in its file (or in the stream, for standard input). */
  start: number;
  /** Byte offset just after the line's newline: where reading resumes once the line is acknowledged. */
  end: number;
  /** The line was longer than `maxLineBytes`; `bytes` holds its first `maxLineBytes` bytes. */
  tooLarge: boolean;
}

/**
 * Receives each complete line: `bytes` (cut to `maxLineBytes` when `tooLarge`; a view of the chunk given to
 * `push` unless the line spanned chunks), its first byte's offset `start` and the offset `end` after its newline.
 */
export type OnLine = (bytes: Buffer, start: number, end: number, tooLarge: boolean) => void;

const NEWLINE = 0x0a;

/**
 * Cuts a byte stream into lines. A partial last line is held (at most `maxLineBytes` of it) until its newline
 * arrives; the bytes of a longer line past `maxLineBytes` are not kept, so memory stays bounded by one line.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** Every byte of the held partial line read so far, those past `maxLineBytes` too. */
  #heldSourceBytes = 0;
  #heldStart = 0;
  #heldTooLarge = false;
  #holding = false;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Bytes of the partial line held, waiting for its newline. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Offset of the held partial line's first byte, when one is held. */
  get heldStart(): number | undefined {
    return this.#holding ? this.#heldStart : undefined;
  }

  /**
   * Hands each complete line of `chunk` (which starts at byte `chunkStart` of the source) to `onLine`, in order, and
   * holds (copies) its partial last line; returns how many lines it handed over. No object is made per line: the
   * bytes are views of `chunk`, so `chunk` must stay unchanged until the lines are done with.
   */
  push(chunk: Buffer, chunkStart: number, onLine: OnLine): number {
    const max = this.#maxLineBytes;
    let lines = 0;
    let position = 0;
    if (this.#holding) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline < 0) {
        this.#hold(chunk, chunkStart);
        return 0;
      }
      this.#hold(chunk.subarray(0, newline), chunkStart);
      const held = this.#release(chunkStart + newline + 1);
      onLine(held.bytes, held.start, held.end, held.tooLarge);
      lines += 1;
      position = newline + 1;
    }
    const length = chunk.length;
    while (position < length) {
      const newline = chunk.indexOf(NEWLINE, position);
      if (newline < 0) {
        this.#hold(chunk.subarray(position), chunkStart + position);
        break;
      }
      if (newline - position > max) {
        onLine(chunk.subarray(position, position + max), chunkStart + position, chunkStart + newline + 1, true);
      } else {
        onLine(chunk.subarray(position, newline), chunkStart + position, chunkStart + newline + 1, false);
      }
      lines += 1;
      position = newline + 1;
    }
    return lines;
  }

  /** The held partial line as a line of its own (its file ended without a newline), or undefined. */
  flush(end: number): SourceLine | undefined {
    return this.#holding ? this.#release(end) : undefined;
  }

  /** Forgets the held partial line (its file was truncated); returns its bytes read so far (kept or not). */
  discard(): number {
    const bytes = this.#heldSourceBytes;
    this.#reset();
    return bytes;
  }

  #hold(bytes: Buffer, start: number): void {
    if (!this.#holding) {
      this.#holding = true;
      this.#heldStart = start;
    }
    this.#heldSourceBytes += bytes.length;
    const room = this.#maxLineBytes - this.#heldBytes;
    if (bytes.length > room) this.#heldTooLarge = true;
    const kept = bytes.length > room ? bytes.subarray(0, Math.max(room, 0)) : bytes;
    if (kept.length > 0) {
      // Copy: the chunk may be large and the partial line small; keep only what the line needs.
      this.#held.push(Buffer.from(kept));
      this.#heldBytes += kept.length;
    }
  }

  #release(end: number): SourceLine {
    const line: SourceLine = {
      bytes: this.#held.length === 1 ? (this.#held[0] as Buffer) : Buffer.concat(this.#held, this.#heldBytes),
      start: this.#heldStart,
      end,
      tooLarge: this.#heldTooLarge,
    };
    this.#reset();
    return line;
  }

  #reset(): void {
    this.#held = [];
    this.#heldBytes = 0;
    this.#heldSourceBytes = 0;
    this.#heldTooLarge = false;
    this.#holding = false;
  }
}
