// The client's crc32c wraps this one and copies its input first (a batch is ~0.5 MiB): called directly, no copy.
import { crc32c } from "@node-rs/crc32";

/** What the encoder needs of a message: the agent's messages (`KafkaMessage`) are this shape. */
export interface BatchMessage {
  readonly key?: Buffer | undefined;
  readonly value?: Buffer | undefined;
  readonly timestamp?: bigint | undefined;
  readonly headers?: Map<Buffer, Buffer> | undefined;
}

/**
 * Kafka's record batch, magic 2 (the wire format of the Produce request's `records`): a 61-byte header, then the
 * records. Offsets of the header fields written when a batch is sent (`stampRecordBatch`); the CRC-32C covers
 * everything from `attributes` to the end.
 */
const LENGTH_AT = 8;
const LEADER_EPOCH_AT = 12;
const MAGIC_AT = 16;
const CRC_AT = 17;
const ATTRIBUTES_AT = 21;
const LAST_OFFSET_DELTA_AT = 23;
const BASE_TIMESTAMP_AT = 27;
const MAX_TIMESTAMP_AT = 35;
const PRODUCER_ID_AT = 43;
const PRODUCER_EPOCH_AT = 51;
const BASE_SEQUENCE_AT = 53;
const COUNT_AT = 57;
export const RECORD_BATCH_HEADER_BYTES = 61;

/** Bytes of `n` as a zigzag varint (Kafka's varint and varlong; |n| < 2^52 here). */
function varintBytes(n: number): number {
  // Most values of a record (deltas, key and value lengths) are below 2^13: one or two bytes, no division.
  if (n >= 0 && n < 64) return 1;
  if (n >= 0 && n < 8192) return 2;
  let zz = n >= 0 ? n * 2 : -n * 2 - 1;
  let bytes = 1;
  while (zz >= 0x80) {
    zz = Math.floor(zz / 128);
    bytes += 1;
  }
  return bytes;
}

function writeVarint(buffer: Buffer, at: number, n: number): number {
  if (n >= 0 && n < 64) {
    buffer[at] = n << 1;
    return at + 1;
  }
  if (n >= 0 && n < 8192) {
    buffer[at] = ((n << 1) & 0x7f) | 0x80;
    buffer[at + 1] = n >> 6;
    return at + 2;
  }
  let zz = n >= 0 ? n * 2 : -n * 2 - 1;
  let pos = at;
  while (zz >= 0x80) {
    buffer[pos++] = (zz % 128) | 0x80;
    zz = Math.floor(zz / 128);
  }
  buffer[pos++] = zz;
  return pos;
}

function headersBytes(headers: Map<Buffer, Buffer>): number {
  let bytes = varintBytes(headers.size);
  for (const [key, value] of headers) {
    bytes += varintBytes(key.length) + key.length + varintBytes(value.length) + value.length;
  }
  return bytes;
}

/**
 * Encodes messages of one partition as one uncompressed record batch, copying each key and value once into a
 * buffer of the exact size (from `alloc`: the sender reuses its memory). Timestamps are CreateTime (the message's,
 * else now). The producer fields are left for `stampRecordBatch`, which a retry under a new producer id calls again.
 */
export function encodeRecordBatch(
  messages: readonly BatchMessage[],
  alloc: (bytes: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const count = messages.length;
  if (count === 0) throw new RangeError("a record batch holds at least one record");
  const now = BigInt(Date.now());
  const times = new Float64Array(count);
  const sizes = new Int32Array(count);
  // Lines of one read share their timestamp: one BigInt → number conversion per read, not per line.
  let lastStamp: bigint | undefined;
  let lastMs = 0;
  let base = 0;
  let max = 0;
  let total = RECORD_BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const message = messages[i] as BatchMessage;
    const stamp = message.timestamp ?? now;
    if (stamp !== lastStamp) {
      lastStamp = stamp;
      lastMs = Number(stamp);
    }
    const time = lastMs;
    times[i] = time;
    if (i === 0) base = max = time;
    else if (time > max) max = time;
    const keyLength = message.key?.length ?? -1;
    const valueLength = message.value?.length ?? -1;
    const body =
      1 +
      varintBytes(time - base) +
      varintBytes(i) +
      varintBytes(keyLength) +
      Math.max(keyLength, 0) +
      varintBytes(valueLength) +
      Math.max(valueLength, 0) +
      (message.headers === undefined ? 1 : headersBytes(message.headers));
    sizes[i] = body;
    total += varintBytes(body) + body;
  }
  const buffer = alloc(total);
  buffer.writeBigInt64BE(0n, 0); // base offset: the broker assigns it
  buffer.writeInt32BE(total - 12, LENGTH_AT);
  buffer.writeInt32BE(-1, LEADER_EPOCH_AT);
  buffer.writeInt8(2, MAGIC_AT);
  buffer.writeInt16BE(0, ATTRIBUTES_AT); // no compression, not transactional, CreateTime
  buffer.writeInt32BE(count - 1, LAST_OFFSET_DELTA_AT);
  buffer.writeBigInt64BE(BigInt(base), BASE_TIMESTAMP_AT);
  buffer.writeBigInt64BE(BigInt(max), MAX_TIMESTAMP_AT);
  buffer.writeInt32BE(count, COUNT_AT);
  let pos = RECORD_BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const message = messages[i] as BatchMessage;
    pos = writeVarint(buffer, pos, sizes[i] as number);
    buffer[pos++] = 0; // record attributes: unused
    pos = writeVarint(buffer, pos, (times[i] as number) - base);
    pos = writeVarint(buffer, pos, i);
    pos = writeBytes(buffer, pos, message.key);
    pos = writeBytes(buffer, pos, message.value);
    const headers = message.headers;
    if (headers === undefined) buffer[pos++] = 0;
    else {
      pos = writeVarint(buffer, pos, headers.size);
      for (const [key, value] of headers) {
        pos = writeBytes(buffer, pos, key);
        pos = writeBytes(buffer, pos, value);
      }
    }
  }
  if (pos !== total) throw new Error(`record batch encoder wrote ${pos} of ${total} bytes`);
  return buffer;
}

function writeBytes(buffer: Buffer, at: number, bytes: Buffer | undefined): number {
  if (bytes === undefined) return writeVarint(buffer, at, -1);
  const pos = writeVarint(buffer, at, bytes.length);
  buffer.set(bytes, pos);
  return pos + bytes.length;
}

/** Sets a batch's idempotent-producer fields and its CRC (called for every send: a retry may have a new id). */
export function stampRecordBatch(batch: Buffer, producerId: bigint, producerEpoch: number, baseSequence: number): void {
  batch.writeBigInt64BE(producerId, PRODUCER_ID_AT);
  batch.writeInt16BE(producerEpoch, PRODUCER_EPOCH_AT);
  batch.writeInt32BE(baseSequence, BASE_SEQUENCE_AT);
  batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES_AT)), CRC_AT);
}

/** Records in an encoded batch. */
export function recordCount(batch: Buffer): number {
  return batch.readInt32BE(COUNT_AT);
}
