import { type LineFields, lineFields } from "./index-fields.ts";

/** What the index keeps of one event (docs/audit-storage.md, "Index"): its fields and its line's byte range. */
export type IndexedEvent = LineFields;

/**
 * A closed batch as it waits to be written: the JSONL body and where each line ends, no index fields yet (they are
 * read by `readIndexFields` when the batch's write starts).
 */
export interface ClosedBatch {
  topic: string;
  partition: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** Kafka timestamp (ms) of the first record: fixes the key's `dt` and `hour`. */
  firstTimestampMs: number;
  /** Uncompressed JSONL, one line per record, in offset order. */
  body: Buffer;
  /** Byte length of each line (without its newline), in offset order: a record's value may hold a newline. */
  lineLengths: Uint32Array;
  /** Lines in the object. */
  records: number;
  /** When the batch's first record arrived (monotonic ms). */
  openedAt: number;
}

/** A closed batch with its index rows, ready to be written. */
export interface SealedBatch extends ClosedBatch {
  /** Index rows, one per distinct event id (the first line of an id that appears twice in the batch). */
  events: IndexedEvent[];
  /** Lines that are not an indexable record (kept in the object, not in the index). */
  unindexable: number;
  /**
   * Whether some line holds a backslash. Without one no JSON string in the batch had an escape, so no index string
   * holds a quote or a backslash and the array literals need no escaping (`textArrayLiteral`).
   */
  backslashes: boolean;
  minTime: string | undefined;
  maxTime: string | undefined;
}

/**
 * Reads the index fields of a closed batch's lines (docs/audit-storage.md, "Index"). The writer calls it when the
 * batch's write starts, not as records arrive: a batch waiting in the buffer then holds its bytes only. Parsed
 * fields held per waiting record (an object, seven strings and a set entry, ~350 bytes of heap per 400-byte line)
 * were half of the writer's memory at 50k events/s (queue-consumer/README.md, "Memory").
 */
export function readIndexFields(batch: ClosedBatch): SealedBatch {
  const events: IndexedEvent[] = [];
  const ids = new Set<string>();
  let unindexable = 0;
  let minMs = Number.POSITIVE_INFINITY;
  let maxMs = Number.NEGATIVE_INFINITY;
  let minTime: string | undefined;
  let maxTime: string | undefined;
  let start = 0;
  for (const length of batch.lineLengths) {
    const fields = lineFields(batch.body, start, start + length);
    if (fields === undefined) {
      unindexable += 1;
    } else if (!ids.has(fields.id)) {
      ids.add(fields.id);
      events.push(fields);
      if (fields.timeMs < minMs) [minMs, minTime] = [fields.timeMs, fields.time];
      if (fields.timeMs > maxMs) [maxMs, maxTime] = [fields.timeMs, fields.time];
    }
    start += length + 1;
  }
  return { ...batch, events, unindexable, backslashes: batch.body.includes(0x5c), minTime, maxTime };
}

/** Capacity of a batch's buffer when the caller gives none; it doubles as lines arrive. */
const DEFAULT_CAPACITY = 1024 * 1024;
/** Lines a batch's length table holds before it doubles. */
const INITIAL_LINES = 4096;

/**
 * The open batch of one partition: records in offset order until the first of max bytes, max records or max age
 * since the first record is reached (docs/audit-storage.md, "Objects"). Only the bytes and each line's length are
 * kept while it is open and while it waits to be written (`close`); the index fields are read at write time
 * (`readIndexFields`, or `seal` for both at once).
 *
 * The lines are copied out of Kafka's fetch buffers (so those are freed at once) into one buffer of `capacity`
 * bytes, which the closed batch's body is a view of: no second copy at close. The writer gives its batch size plus
 * one line's room; the pages of a large buffer are only taken as lines are written into it, so an open batch costs
 * what it holds. A batch that outgrows its buffer moves to one twice as large.
 */
export class PartitionBatch {
  private buffer: Buffer;
  private lengths = new Uint32Array(INITIAL_LINES);
  private count = 0;
  private firstOffset = -1n;
  private lastOffset = -1n;
  private firstTimestampMs = 0;
  /** JSONL bytes, newlines included. */
  bytes = 0;
  /** Monotonic time the first record arrived; 0 while empty. */
  openedAt = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
    capacity = DEFAULT_CAPACITY,
  ) {
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  get size(): number {
    return this.count;
  }

  add(value: Buffer, offset: bigint, timestampMs: number, now: number): void {
    if (this.count === 0) {
      this.openedAt = now;
      this.firstOffset = offset;
      this.firstTimestampMs = timestampMs;
    }
    this.lastOffset = offset;
    const need = value.length + 1;
    if (this.buffer.length - this.bytes < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.buffer.length, this.bytes + need));
      this.buffer.copy(grown, 0, 0, this.bytes);
      this.buffer = grown;
    }
    if (this.count === this.lengths.length) {
      const grown = new Uint32Array(2 * this.lengths.length);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    value.copy(this.buffer, this.bytes);
    this.buffer[this.bytes + value.length] = 0x0a;
    this.lengths[this.count] = value.length;
    this.count += 1;
    this.bytes += need;
  }

  /** Whether size or count closes the batch (age is the writer's: `batchWindowEnd` from `openedAt`). */
  isFull(limits: { maxBytes: number; maxRecords: number }): boolean {
    return this.bytes >= limits.maxBytes || this.count >= limits.maxRecords;
  }

  /** The batch's bytes, to be written later; its index fields are read then (`readIndexFields`). */
  close(): ClosedBatch {
    if (this.count === 0) throw new Error("an empty batch cannot be sealed");
    return {
      topic: this.topic,
      partition: this.partition,
      firstOffset: this.firstOffset,
      lastOffset: this.lastOffset,
      firstTimestampMs: this.firstTimestampMs,
      body: this.buffer.subarray(0, this.bytes),
      lineLengths: this.lengths.subarray(0, this.count),
      records: this.count,
      openedAt: this.openedAt,
    };
  }

  /** `close` and `readIndexFields` at once. */
  seal(): SealedBatch {
    return readIndexFields(this.close());
  }
}
