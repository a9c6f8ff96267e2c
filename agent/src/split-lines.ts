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

const NEWLINE = 0x0a;

/**
 * Cuts a byte stream into lines. A partial last line is held (at most `maxLineBytes` of it) until its newline
 * arrives; the bytes of a longer line past `maxLineBytes` are not kept, so memory stays bounded by one line.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #held: Buffer[] = [];
  #heldBytes = 0;
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

  /** The complete lines of `chunk`, which starts at byte `chunkStart` of the source. */
  push(chunk: Buffer, chunkStart: number): SourceLine[] {
    const lines: SourceLine[] = [];
    let position = 0;
    while (position < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, position);
      if (newline < 0) {
        this.#hold(chunk.subarray(position), chunkStart + position);
        break;
      }
      const segment = chunk.subarray(position, newline);
      const end = chunkStart + newline + 1;
      if (this.#holding) {
        this.#hold(segment, chunkStart + position);
        lines.push(this.#release(end));
      } else {
        const tooLarge = segment.length > this.#maxLineBytes;
        lines.push({
          bytes: tooLarge ? segment.subarray(0, this.#maxLineBytes) : segment,
          start: chunkStart + position,
          end,
          tooLarge,
        });
      }
      position = newline + 1;
    }
    return lines;
  }

  /** The held partial line as a line of its own (its file ended without a newline), or undefined. */
  flush(end: number): SourceLine | undefined {
    return this.#holding ? this.#release(end) : undefined;
  }

  /** Forgets the held partial line (its file was truncated); returns how many bytes were held. */
  discard(): number {
    const bytes = this.#heldBytes;
    this.#reset();
    return bytes;
  }

  #hold(bytes: Buffer, start: number): void {
    if (!this.#holding) {
      this.#holding = true;
      this.#heldStart = start;
    }
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
    this.#heldTooLarge = false;
    this.#holding = false;
  }
}
