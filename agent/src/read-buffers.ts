/**
 * The buffers file reads go into, reused instead of allocated per read. Lines are handed to Kafka as views of these
 * buffers (no copy per line or per read), so a buffer is taken again only once every line in it was acknowledged:
 * `release(readEnd)` with the read position (bytes read since start, over every file) Kafka acknowledged up to.
 * A short read (the file's end) leaves the rest of its buffer for the next read, so a tail that reads a line at a
 * time still fills whole buffers. Memory: the buffers that hold unacknowledged bytes (the agent's in-flight bound),
 * plus the free ones kept for reuse; none of it waits for the garbage collector.
 */
export class ReadBuffers {
  readonly #size: number;
  readonly #minRoom: number;
  readonly #maxFree: number;
  /** Buffers holding bytes not yet released, oldest first; the last one is being filled. */
  readonly #held: { buffer: Buffer; readStart: number; readEnd: number }[] = [];
  /** Index of the oldest held buffer (the array is compacted now and then, not shifted per release). */
  #head = 0;
  readonly #free: Buffer[] = [];
  #fill = 0;
  #read = 0;
  #copiedFrom = Number.POSITIVE_INFINITY;

  /**
   * @param size bytes per buffer
   * @param minRoom a buffer with less room left than this is not read into again (a fresh one is taken)
   * @param maxFree free buffers kept for reuse; more are left to the garbage collector
   */
  constructor(size: number, minRoom: number, maxFree: number) {
    this.#size = size;
    this.#minRoom = Math.min(minRoom, size);
    this.#maxFree = maxFree;
  }

  /** Bytes read into these buffers since start: the read position `release` is given. */
  get readPosition(): number {
    return this.#read;
  }

  /** Buffers allocated and not left to the collector (held + free). */
  get buffers(): number {
    return this.#held.length - this.#head + this.#free.length;
  }

  /** Their bytes. */
  get bytes(): number {
    return this.buffers * this.#size;
  }

  /**
   * The bytes read from `readPosition` on are not referenced: they belong to a partial line that its reader copied
   * (or dropped past its maximum). A full buffer that holds only such bytes is read into again instead of a fresh one,
   * so a line of many megabytes without a newline goes through one buffer, not one per read until an acknowledgement.
   * `Infinity` (the default) when every byte read may still be referenced.
   */
  copiedFrom(readPosition: number): void {
    this.#copiedFrom = readPosition;
  }

  /** Where the next read goes: at most `maxBytes` of the current buffer's room, or of a fresh buffer. */
  room(maxBytes: number): Buffer {
    let current = this.#held[this.#held.length - 1];
    if (current === undefined || this.#held.length === this.#head || this.#size - this.#fill < this.#minRoom) {
      if (current !== undefined && this.#held.length > this.#head && current.readStart >= this.#copiedFrom) {
        current.readStart = this.#read;
      } else {
        current = {
          buffer: this.#free.pop() ?? Buffer.allocUnsafeSlow(this.#size),
          readStart: this.#read,
          readEnd: this.#read,
        };
        this.#held.push(current);
      }
      this.#fill = 0;
    }
    return current.buffer.subarray(this.#fill, this.#fill + Math.max(1, Math.min(maxBytes, this.#size - this.#fill)));
  }

  /** `bytes` were read into the room last given: they are the current buffer's next bytes. */
  filled(bytes: number): void {
    const current = this.#held[this.#held.length - 1];
    if (current === undefined) return;
    this.#fill += bytes;
    this.#read += bytes;
    current.readEnd = this.#read;
  }

  /** Every byte read before `readEnd` is acknowledged (or dropped): the buffers wholly before it are reused. */
  release(readEnd: number): void {
    // The buffer being filled stays: the next read goes into its room.
    while (this.#head < this.#held.length - 1) {
      const oldest = this.#held[this.#head] as { buffer: Buffer; readStart: number; readEnd: number };
      if (oldest.readEnd > readEnd) break;
      if (this.#free.length < this.#maxFree) this.#free.push(oldest.buffer);
      this.#head += 1;
    }
    if (this.#head > 64 && this.#head * 2 > this.#held.length) {
      this.#held.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
