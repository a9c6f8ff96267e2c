import { indexFields } from "./index-fields.ts";

/** What the index keeps of one event (docs/audit-storage.md, "Index"): its fields and its byte range. */
export interface IndexedEvent {
  id: string;
  tenant_id: string;
  time: string;
  principal_id: string;
  action: string;
  result: string;
  resource: string;
  /** Byte range of the line (without its newline) in the object's uncompressed JSONL. */
  byte_start: number;
  byte_length: number;
}

/** A closed batch: the JSONL body and the index rows, ready to be written. */
export interface SealedBatch {
  topic: string;
  partition: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** Kafka timestamp (ms) of the first record: fixes the key's `dt` and `hour`. */
  firstTimestampMs: number;
  /** Uncompressed JSONL, one line per record, in offset order. */
  body: Buffer;
  /** Index rows, one per distinct event id (the first line of an id that appears twice in the batch). */
  events: IndexedEvent[];
  /** Lines that are not an indexable record (kept in the object, not in the index). */
  unindexable: number;
  /**
   * Whether some line holds a backslash. Without one no JSON string in the batch had an escape, so no index string
   * holds a quote or a backslash and the array literals need no escaping (`textArrayLiteral`).
   */
  backslashes: boolean;
  /** Lines in the object. */
  records: number;
  minTime: string | undefined;
  maxTime: string | undefined;
  /** When the batch's first record arrived (monotonic ms). */
  openedAt: number;
}

/** Capacity of a batch's buffer when the caller gives none; it doubles as lines arrive. */
const DEFAULT_CAPACITY = 1024 * 1024;

/**
 * The open batch of one partition: records in offset order until the first of max bytes, max records or max age
 * since the first record is reached (docs/audit-storage.md, "Objects"). Index fields are read as each record
 * arrives, so sealing only hands the bytes over.
 *
 * The lines are copied out of Kafka's fetch buffers (so those are freed at once) into one buffer of `capacity`
 * bytes, which the sealed batch's body is a view of: no second copy at seal. The writer gives its batch size plus
 * one line's room; the pages of a large buffer are only taken as lines are written into it, so an open batch costs
 * what it holds. A batch that outgrows its buffer moves to one twice as large.
 */
export class PartitionBatch {
  private buffer: Buffer;
  private count = 0;
  private readonly events: IndexedEvent[] = [];
  private readonly ids = new Set<string>();
  private unindexable = 0;
  private backslashes = false;
  private firstOffset = -1n;
  private lastOffset = -1n;
  private firstTimestampMs = 0;
  private minMs = Number.POSITIVE_INFINITY;
  private maxMs = Number.NEGATIVE_INFINITY;
  private minTime: string | undefined;
  private maxTime: string | undefined;
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
    if (!this.backslashes && value.includes(0x5c)) this.backslashes = true;
    const fields = indexFields(value);
    if (fields === undefined) {
      this.unindexable += 1;
    } else if (!this.ids.has(fields.id)) {
      this.ids.add(fields.id);
      this.events.push({ ...fields, byte_start: this.bytes, byte_length: value.length });
      if (fields.timeMs < this.minMs) [this.minMs, this.minTime] = [fields.timeMs, fields.time];
      if (fields.timeMs > this.maxMs) [this.maxMs, this.maxTime] = [fields.timeMs, fields.time];
    }
    const need = value.length + 1;
    if (this.buffer.length - this.bytes < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.buffer.length, this.bytes + need));
      this.buffer.copy(grown, 0, 0, this.bytes);
      this.buffer = grown;
    }
    value.copy(this.buffer, this.bytes);
    this.buffer[this.bytes + value.length] = 0x0a;
    this.count += 1;
    this.bytes += need;
  }

  /** Whether size or count closes the batch (age is checked by the caller's timer). */
  isFull(limits: { maxBytes: number; maxRecords: number }): boolean {
    return this.bytes >= limits.maxBytes || this.count >= limits.maxRecords;
  }

  isDue(maxAgeMs: number, now: number): boolean {
    return this.count > 0 && now - this.openedAt >= maxAgeMs;
  }

  seal(): SealedBatch {
    if (this.count === 0) throw new Error("an empty batch cannot be sealed");
    const body = this.buffer.subarray(0, this.bytes);
    return {
      topic: this.topic,
      partition: this.partition,
      firstOffset: this.firstOffset,
      lastOffset: this.lastOffset,
      firstTimestampMs: this.firstTimestampMs,
      body,
      events: this.events,
      unindexable: this.unindexable,
      backslashes: this.backslashes,
      records: this.count,
      minTime: this.minTime,
      maxTime: this.maxTime,
      openedAt: this.openedAt,
    };
  }
}
