import { type BatchBody, MemoryBody } from "./batch-body.ts";
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
  /** Uncompressed JSONL, one line per record, in offset order: in the heap or in a spool file (`BatchBody`). */
  body: BatchBody;
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
  batch.body.forEachLine(batch.lineLengths, (buffer, start, end, byteStart) => {
    const fields = lineFields(buffer, start, end);
    if (fields === undefined) {
      unindexable += 1;
    } else if (!ids.has(fields.id)) {
      fields.byte_start = byteStart;
      ids.add(fields.id);
      events.push(fields);
      if (fields.timeMs < minMs) [minMs, minTime] = [fields.timeMs, fields.time];
      if (fields.timeMs > maxMs) [maxMs, maxTime] = [fields.timeMs, fields.time];
    }
  });
  return { ...batch, events, unindexable, backslashes: batch.body.hasBackslash(), minTime, maxTime };
}

/** Lines a batch's length table holds before it doubles. */
const INITIAL_LINES = 4096;

/**
 * The open batch of one partition: records in offset order until the first of max bytes, max records or max age
 * since the first record is reached (docs/audit-storage.md, "Objects"). Only the bytes (in its `BatchBody`: the heap,
 * or a spool file) and each line's length are kept while it is open and while it waits to be written (`close`);
 * the index fields are read at write time (`readIndexFields`, or `seal` for both at once). The lines are copied out
 * of Kafka's fetch buffers, so those are freed at once.
 */
export class PartitionBatch {
  private lengths = new Uint32Array(INITIAL_LINES);
  private count = 0;
  private firstOffset = -1n;
  private lastOffset = -1n;
  private firstTimestampMs = 0;
  /** Monotonic time the first record arrived; 0 while empty. */
  openedAt = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly body: BatchBody = new MemoryBody(),
  ) {}

  get size(): number {
    return this.count;
  }

  /** JSONL bytes, newlines included. */
  get bytes(): number {
    return this.body.length;
  }

  /** Adds a record. Throws `QUEUE_CONSUMER_SPOOL_FAILED` when its spool file cannot be written. */
  add(value: Buffer, offset: bigint, timestampMs: number, now: number): void {
    this.body.append(value);
    if (this.count === 0) {
      this.openedAt = now;
      this.firstOffset = offset;
      this.firstTimestampMs = timestampMs;
    }
    this.lastOffset = offset;
    if (this.count === this.lengths.length) {
      const grown = new Uint32Array(2 * this.lengths.length);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    this.lengths[this.count] = value.length;
    this.count += 1;
  }

  /** Whether size or count closes the batch (age is the writer's: `batchWindowEnd` from `openedAt`). */
  isFull(limits: { maxBytes: number; maxRecords: number }): boolean {
    return this.body.length >= limits.maxBytes || this.count >= limits.maxRecords;
  }

  /** The batch's bytes, to be written later; its index fields are read then (`readIndexFields`). */
  close(): ClosedBatch {
    if (this.count === 0) throw new Error("an empty batch cannot be sealed");
    this.body.finish();
    return {
      topic: this.topic,
      partition: this.partition,
      firstOffset: this.firstOffset,
      lastOffset: this.lastOffset,
      firstTimestampMs: this.firstTimestampMs,
      body: this.body,
      lineLengths: this.lengths.subarray(0, this.count),
      records: this.count,
      openedAt: this.openedAt,
    };
  }

  /** Frees the body of a batch dropped before it was closed. */
  discard(): void {
    this.body.discard();
  }

  /** `close` and `readIndexFields` at once. */
  seal(): SealedBatch {
    return readIndexFields(this.close());
  }
}
