import { compressionsAlgorithmsByBitmask, type Reader, Writer } from "@platformatic/kafka/protocol";
import { KafkaReadError } from "./errors.ts";

/**
 * The Kafka Fetch API (version 12: Kafka 2.7 and later, topics by name) on the wire, records read in place: the
 * writer needs each record's offset, timestamp and value, and nothing else. `@platformatic/kafka`'s consumer stream
 * builds an object per record, its header map, a bound commit function and a diagnostics context, and pushes each
 * through a `Readable`: 4.3–4.9 µs of CPU per record on this machine against 0.9 µs read here (queue-consumer/README.md,
 * "Throughput").
 */
export const FETCH_API_KEY = 1;
export const FETCH_VERSION = 12;
const READ_COMMITTED = 1;

export interface FetchSettings {
  maxWaitMs: number;
  /** Bytes of records in one answer (the broker still returns a first batch larger than this). */
  maxBytes: number;
}

/** The Fetch request for `positions` (partition → next offset) of `topic`: no fetch session, read committed. */
export function fetchRequest(topic: string, positions: ReadonlyMap<number, bigint>, settings: FetchSettings): Writer {
  return Writer.create()
    .appendInt32(-1) // replica id: a consumer
    .appendInt32(settings.maxWaitMs)
    .appendInt32(1) // min bytes
    .appendInt32(settings.maxBytes)
    .appendInt8(READ_COMMITTED)
    .appendInt32(0) // session id: none
    .appendInt32(-1) // session epoch: full fetch, no session
    .appendArray([topic], (w, name) => {
      w.appendString(name).appendArray([...positions], (w, [partition, offset]) => {
        w.appendInt32(partition)
          .appendInt32(-1) // current leader epoch: unknown
          .appendInt64(offset)
          .appendInt32(-1) // last fetched epoch
          .appendInt64(-1n) // log start offset (a follower's)
          .appendInt32(settings.maxBytes);
      });
    })
    .appendArray([], () => {}) // forgotten topics
    .appendString("") // rack id
    .appendTaggedFields();
}

/** Bytes as the connection received them: the socket's chunks, not joined. */
export type ReceivedBytes = Reader["buffer"];

/** What one fetch answered for one partition. */
export interface PartitionAnswer {
  partition: number;
  /** 0, or the partition's Kafka error code. */
  errorCode: number;
  /**
   * The record batches as the broker sent them (the last one may be cut short), when any: views of the socket's
   * chunks (an answer of 0.5–4 MiB spans ~20 of them), joined by `joinedBytes` when read.
   */
  records: ReceivedBytes | undefined;
}

/** A fetch answer: the request's error code (0 when none) and each partition's answer for `topic`. */
export interface FetchAnswer {
  errorCode: number;
  partitions: PartitionAnswer[];
}

/**
 * Reads a version 12 Fetch response (the connection's `parseResponse`): partition errors are returned, not thrown,
 * so the partitions that answered are still read. Records stay bytes (`readRecordBatches` reads them).
 */
export function parseFetchResponse(_correlationId: number, _apiKey: number, _version: number, r: Reader): FetchAnswer {
  r.readInt32(); // throttle time
  const errorCode = r.readInt16();
  r.readInt32(); // session id
  const partitions: PartitionAnswer[] = [];
  const topics = r.readUnsignedVarInt() - 1;
  for (let t = 0; t < topics; t++) {
    r.readString();
    const count = r.readUnsignedVarInt() - 1;
    for (let i = 0; i < count; i++) {
      const partition = r.readInt32();
      const partitionError = r.readInt16();
      r.readInt64(); // high watermark
      r.readInt64(); // last stable offset
      r.readInt64(); // log start offset
      const aborted = r.readUnsignedVarInt() - 1; // aborted transactions (none from our producers)
      for (let a = 0; a < aborted; a++) {
        r.readInt64();
        r.readInt64();
        r.readTaggedFields();
      }
      r.readInt32(); // preferred read replica
      const size = r.readUnsignedVarInt() - 1; // COMPACT_RECORDS: length + 1, 0 for null
      let records: ReceivedBytes | undefined;
      if (size > 0) {
        records = r.buffer.subarray(r.position, r.position + size);
        r.skip(size);
      }
      r.readTaggedFields();
      partitions.push({ partition, errorCode: partitionError, records });
    }
    r.readTaggedFields();
  }
  r.readTaggedFields();
  return { errorCode, partitions };
}

/**
 * `bytes` as one buffer: the chunk itself when there is one, else a copy into `scratch` (returned grown when it is
 * too small). The scratch is the caller's, reused answer after answer, instead of a fresh buffer per answer (the
 * client's `slice`). The consumer section alternated with the fresh buffer (three pairs, 2026-11-27 08:50 UTC):
 * 53.2k / 56.8k / 55.3k records/s against 51.2k / 46.0k / 51.2k, the writer's CPU 10.5–11.9 µs per record against
 * 12.0–12.9, peak RSS 331–340 MiB against 332–358 (bench/README.md, "What limits it").
 */
export function joinedBytes(bytes: ReceivedBytes, scratch: Buffer): { bytes: Buffer; scratch: Buffer } {
  const chunks = bytes.buffers;
  if (chunks.length === 1) return { bytes: chunks[0] as Buffer, scratch };
  const into = scratch.length >= bytes.length ? scratch : Buffer.allocUnsafeSlow(bytes.length);
  let at = 0;
  for (const chunk of chunks) {
    chunk.copy(into, at);
    at += chunk.length;
  }
  return { bytes: into.subarray(0, at), scratch: into };
}

/**
 * A record read in place: `value` is a view of the fetch answer's bytes, or of the fetcher's scratch buffer, valid
 * only during the call (copy what is kept).
 */
export type RecordSink = (offset: bigint, timestampMs: number, value: Buffer) => void;

/** The batch format (magic 2) header: byte offsets of its fields. */
const BATCH_LENGTH = 8;
const MAGIC = 16;
const ATTRIBUTES = 21;
const LAST_OFFSET_DELTA = 23;
const BASE_TIMESTAMP = 27;
const MAX_TIMESTAMP = 35;
const RECORD_COUNT = 57;
const BATCH_HEADER = 61;
const COMPRESSION = 0x07;
const LOG_APPEND_TIME = 0x08;
const CONTROL = 0x20;

/** `KAFKA_READ_RECORD_BATCH_INVALID`: a record batch the writer cannot read. */
function invalid(message: string): KafkaReadError {
  return new KafkaReadError("KAFKA_READ_RECORD_BATCH_INVALID", message);
}

/**
 * Reads the record batches of one partition's answer: every record at or after `from` goes to `sink` (a batch may
 * begin before the offset asked for), control batches (transaction markers) are skipped. Returns the offset after
 * the last whole batch read (`from` when none was whole: the answer was cut inside its first batch).
 */
export function readRecordBatches(bytes: Buffer, from: bigint, sink: RecordSink): bigint {
  let next = from;
  let at = 0;
  while (bytes.length - at >= BATCH_HEADER) {
    const size = 12 + bytes.readInt32BE(at + BATCH_LENGTH);
    if (bytes.length - at < size) break; // cut short by the answer's size limit: fetched again next time
    if (bytes[at + MAGIC] !== 2) throw invalid(`record batch at ${at}: magic ${bytes[at + MAGIC]}, not 2`);
    const baseOffset = bytes.readBigInt64BE(at);
    const attributes = bytes.readInt16BE(at + ATTRIBUTES);
    const count = bytes.readInt32BE(at + RECORD_COUNT);
    if ((attributes & CONTROL) === 0 && count > 0) {
      const logAppendTime = (attributes & LOG_APPEND_TIME) !== 0;
      const baseTimestamp = Number(bytes.readBigInt64BE(at + (logAppendTime ? MAX_TIMESTAMP : BASE_TIMESTAMP)));
      const codec = attributes & COMPRESSION;
      let records = bytes.subarray(at + BATCH_HEADER, at + size);
      if (codec !== 0) {
        const algorithm = compressionsAlgorithmsByBitmask[codec];
        if (algorithm === undefined) throw invalid(`record batch at ${at}: unknown compression ${codec}`);
        records = algorithm.decompressSync(records);
      }
      readRecords(records, count, baseOffset, baseTimestamp, logAppendTime, from, sink);
    }
    next = baseOffset + BigInt(bytes.readInt32BE(at + LAST_OFFSET_DELTA)) + 1n;
    at += size;
  }
  return next > from ? next : from;
}

function readRecords(
  b: Buffer,
  count: number,
  baseOffset: bigint,
  baseTimestamp: number,
  logAppendTime: boolean,
  from: bigint,
  sink: RecordSink,
): void {
  const cursor = { at: 0 };
  for (let k = 0; k < count; k++) {
    const length = varint(b, cursor);
    const end = cursor.at + length;
    if (length < 0 || end > b.length) throw invalid(`record ${k} of batch ${baseOffset} is cut short`);
    cursor.at += 1; // attributes
    const timestampDelta = varint(b, cursor);
    const offset = baseOffset + BigInt(varint(b, cursor));
    const keyLength = varint(b, cursor);
    if (keyLength > 0) cursor.at += keyLength;
    const valueLength = varint(b, cursor);
    if (offset >= from && valueLength >= 0 && cursor.at + valueLength <= end) {
      sink(
        offset,
        logAppendTime ? baseTimestamp : baseTimestamp + timestampDelta,
        b.subarray(cursor.at, cursor.at + valueLength),
      );
    }
    cursor.at = end; // headers skipped
  }
}

/** A zig-zag varint (or varlong, exact up to 2^53) at `cursor.at`, which it moves past it. */
function varint(b: Buffer, cursor: { at: number }): number {
  let value = 0;
  let scale = 1;
  let byte: number;
  do {
    if (cursor.at >= b.length) throw invalid("varint runs past the record batch");
    byte = b[cursor.at++] as number;
    value += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte & 0x80);
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}
