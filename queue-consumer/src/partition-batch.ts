import { type BatchBody, forEachLine, MemoryBody } from "./batch-body.ts";
import { IndexChunk } from "./index-chunk.ts";
import { type LineFields, lineFields, parsedLineFields, scanIndexLine } from "./index-fields.ts";

/** What the index keeps of one event (docs/audit-storage.md, "Index"): its fields and its line's byte range. */
export type IndexedEvent = LineFields;

/**
 * Events per chunk, each one `COPY`: a batch of ~400-byte records (16 MiB, ~40,000) in one; a batch of more,
 * smaller ones (up to 100,000 by default) in two or more, so that the payload stays near the batch's size. One copy
 * per 25,000-event batch cost PostgreSQL 5.5–5.9 µs per row against 6.0–6.9 for three of up to 10,000
 * (`bench/src/pipeline/index-write.ts`, four alternated pairs).
 */
export const EVENTS_PER_CHUNK = 50_000;

/**
 * A closed batch as it waits to be written: the JSONL body and where each line ends, no index fields yet (they are
 * read by `readIndexFieldsInSlices` when the batch's write starts).
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
  /** The index rows, encoded as the lines were read: one chunk per `EVENTS_PER_CHUNK` events, in line order. */
  chunks: IndexChunk[];
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
 * Reads the index fields of a closed batch's lines and encodes its index rows (`IndexChunk`; docs/audit-storage.md,
 * "Index"). The writer reads them when the batch's write starts (in slices, while its PUT is in flight:
 * `readIndexFieldsInSlices`), not as records arrive: a batch waiting in the buffer then holds its bytes only. Parsed fields held per waiting record (an object, seven strings and a set
 * entry, ~350 bytes of heap per 400-byte line) were half of the writer's memory at 50k events/s
 * (queue-consumer/README.md, "Memory").
 *
 * Every indexable line becomes an event row, an id seen twice included: the index's unique key (tenant, time, id)
 * turns the second into a duplicate when it is written (`writeBatchIndex`), as it does for one in another batch.
 */
export function readIndexFields(batch: ClosedBatch): SealedBatch {
  const encoding = new IndexEncoding(batch);
  forEachLine(batch.body, batch.lineLengths, encoding.onLine);
  return encoding.sealed();
}

/**
 * Lines `readIndexFieldsInSlices` reads before it lets the event loop run: ~1.5–2.5 ms of the writer's thread for
 * ≈ 400-byte records.
 */
export const LINES_PER_SLICE = 1024;

/**
 * `readIndexFields`, `linesPerSlice` lines at a time, awaiting `pause()` before each slice: the writer's event loop
 * runs between them, so a PUT answered meanwhile is stamped durable when it is (`objects.written_at`), and a fetch
 * or the other write's statements are not held up for the whole batch (~100 ms for 40k records).
 */
export async function readIndexFieldsInSlices(
  batch: ClosedBatch,
  pause: () => Promise<void>,
  linesPerSlice = LINES_PER_SLICE,
): Promise<SealedBatch> {
  const encoding = new IndexEncoding(batch);
  const reader = batch.body.lines(batch.lineLengths);
  try {
    do await pause();
    while (reader.read(linesPerSlice, encoding.onLine) > 0);
  } finally {
    reader.close();
  }
  return encoding.sealed();
}

/** A batch's index rows as its lines are read, in order (`readIndexFields`). */
class IndexEncoding {
  readonly #chunks: IndexChunk[] = [];
  #chunk: IndexChunk | undefined;
  #line = 0;
  #indexed = 0;
  #minMs = Number.POSITIVE_INFINITY;
  #maxMs = Number.NEGATIVE_INFINITY;
  #minTime: string | undefined;
  #maxTime: string | undefined;

  constructor(private readonly batch: ClosedBatch) {}

  readonly onLine = (buffer: Buffer, start: number, end: number, byteStart: number): void => {
    let chunk = this.#chunk;
    if (chunk === undefined || chunk.full) {
      chunk?.end();
      chunk = new IndexChunk(this.#line, Math.min(EVENTS_PER_CHUNK, this.batch.records - this.#line));
      this.#chunk = chunk;
      this.#chunks.push(chunk);
    }
    this.#line += 1;
    chunk.endLine = this.#line;
    const scanned = scanIndexLine(buffer, start, end);
    if (scanned !== undefined) {
      this.#noted(scanned.time, scanned.timeMs);
      chunk.addScanned(buffer, scanned, byteStart, byteStart + end - start);
      return;
    }
    const parsed = parsedLineFields(buffer, start, end);
    if (parsed === undefined) return;
    this.#noted(parsed.time, parsed.timeMs);
    chunk.addParsed(parsed, byteStart);
  };

  #noted(time: string, timeMs: number): void {
    this.#indexed += 1;
    if (timeMs < this.#minMs) [this.#minMs, this.#minTime] = [timeMs, time];
    if (timeMs > this.#maxMs) [this.#maxMs, this.#maxTime] = [timeMs, time];
  }

  sealed(): SealedBatch {
    this.#chunk?.end();
    const batch = this.batch;
    return {
      ...batch,
      chunks: this.#chunks,
      unindexable: batch.records - this.#indexed,
      backslashes: batch.body.hasBackslash(),
      minTime: this.#minTime,
      maxTime: this.#maxTime,
    };
  }
}

/**
 * The index fields of lines `fromLine` to `toLine` (by their order) of a batch, read again from its body: a chunk
 * that goes in as duplicates do (`writeBatchIndex`), and tests. Unindexable lines are left out.
 */
export function batchEvents(batch: ClosedBatch, fromLine = 0, toLine = batch.records): IndexedEvent[] {
  const events: IndexedEvent[] = [];
  let line = 0;
  forEachLine(batch.body, batch.lineLengths, (buffer, start, end, byteStart) => {
    line += 1;
    if (line <= fromLine || line > toLine) return;
    const fields = lineFields(buffer, start, end);
    if (fields === undefined) return;
    fields.byte_start = byteStart;
    events.push(fields);
  });
  return events;
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

  /** The batch's bytes, to be written later; its index fields are read then (`readIndexFieldsInSlices`). */
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
