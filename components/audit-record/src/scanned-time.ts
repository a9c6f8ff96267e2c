import { recordTimeMs } from "./record-time.ts";

/** Room for any `time` kept: `recordTimeMs` takes at most 35 characters (nine fraction digits and an offset). */
const MAX_TIME_BYTES = 64;

/**
 * The `time` of scanned lines, read from their bytes (`scanRecord` locates it), with the last well-formed one kept:
 * records written in the same millisecond share it, so at high rates most lines compare a few bytes instead of
 * making a string and checking its format and calendar (`recordTimeMs`). The agent checks the format with it, the
 * writer also takes the text and the epoch milliseconds. One per caller (it is state, not a cache shared by all).
 */
export class ScannedTime {
  /** The last well-formed time, as text (the same string while the bytes repeat). */
  time = "";
  /** `time` in epoch milliseconds (`recordTimeMs`). */
  timeMs = 0;
  readonly #bytes = new Uint8Array(MAX_TIME_BYTES);
  #length = 0;

  /** Whether bytes `start` to `end` of `b` (printable ASCII: a scanned string) are a well-formed time; sets `time`. */
  read(b: Buffer, start: number, end: number): boolean {
    const length = end - start;
    const kept = this.#bytes;
    if (length === this.#length && length > 0) {
      // From the end: times of consecutive records differ in their last digits.
      let i = length - 1;
      while (i >= 0 && kept[i] === b[start + i]) i -= 1;
      if (i < 0) return true;
    }
    const time = b.toString("latin1", start, end);
    const timeMs = recordTimeMs(time);
    if (timeMs === undefined) return false;
    // A copy: the caller's buffer is reused for other lines.
    this.#length = b.copy(kept, 0, start, end);
    this.time = time;
    this.timeMs = timeMs;
    return true;
  }
}
