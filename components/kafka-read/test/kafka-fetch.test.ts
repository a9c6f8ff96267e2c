import { describe, expect, test } from "bun:test";
import { createRecordsBatch, type MessageRecord, Writer } from "@platformatic/kafka/protocol";
import { KafkaReadError } from "../src/errors.ts";
import { joinedBytes, readRecordBatches } from "../src/kafka-fetch.ts";

// Record batches as a producer writes them (the Kafka client's own encoder), with the offsets a broker gives.
const T0 = 1_795_000_000_000n;

function batch(
  baseOffset: bigint,
  values: (string | null)[],
  options: { compression?: "none" | "gzip"; keys?: boolean; headers?: boolean } = {},
): Buffer {
  const messages = values.map((value, i) => ({
    topic: "t",
    key: options.keys ? Buffer.from(`tenant-${i}`) : undefined,
    value: value === null ? null : Buffer.from(value),
    headers: options.headers ? new Map([[Buffer.from("h"), Buffer.from(`v${i}`)]]) : undefined,
    timestamp: T0 + BigInt(i * 7),
  })) as MessageRecord[];
  const bytes = Buffer.from(createRecordsBatch(messages, { compression: options.compression ?? "none" }).buffer);
  bytes.writeBigInt64BE(baseOffset, 0);
  return bytes;
}

function read(bytes: Buffer, from: bigint) {
  const records: { offset: bigint; timestampMs: number; value: string }[] = [];
  const next = readRecordBatches(bytes, from, (offset, timestampMs, value) =>
    records.push({ offset, timestampMs, value: value.toString() }),
  );
  return { next, records };
}

const ATTRIBUTES = 21;

/** What `f` threw (undefined when it returned). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectRefused(bytes: Buffer, message: string) {
  const error = thrown(() => read(bytes, 0n));
  expect(error).toBeInstanceOf(KafkaReadError);
  expect((error as KafkaReadError).code).toBe("KAFKA_READ_RECORD_BATCH_INVALID");
  expect((error as Error).message).toContain(message);
}

describe("readRecordBatches", () => {
  test("each record's offset, timestamp and value, keys and headers skipped; the position after the batch", () => {
    const { next, records } = read(batch(40n, ["a", "bb", "ccc"], { keys: true, headers: true }), 40n);
    expect(records).toEqual([
      { offset: 40n, timestampMs: Number(T0), value: "a" },
      { offset: 41n, timestampMs: Number(T0) + 7, value: "bb" },
      { offset: 42n, timestampMs: Number(T0) + 14, value: "ccc" },
    ]);
    expect(next).toBe(43n);
  });

  test("a batch that begins before the position asked for: only the records from it on", () => {
    const { next, records } = read(batch(40n, ["a", "bb", "ccc"]), 42n);
    expect(records.map((r) => r.offset)).toEqual([42n]);
    expect(next).toBe(43n);
  });

  test("several batches; the last one cut short by the answer's size is left for the next fetch", () => {
    const whole = Buffer.concat([batch(0n, ["a", "b"]), batch(2n, ["c"])]);
    expect(read(whole, 0n).records.map((r) => r.value)).toEqual(["a", "b", "c"]);
    const cut = whole.subarray(0, whole.length - 3);
    const { next, records } = read(cut, 0n);
    expect(records.map((r) => r.value)).toEqual(["a", "b"]);
    expect(next).toBe(2n);
  });

  test("an answer cut inside its first batch reads nothing and keeps the position", () => {
    const bytes = batch(10n, ["a", "b"]);
    expect(read(bytes.subarray(0, bytes.length - 1), 10n)).toEqual({ next: 10n, records: [] });
    expect(read(bytes.subarray(0, 20), 10n)).toEqual({ next: 10n, records: [] });
  });

  test("a gzip batch is decompressed", () => {
    const values = Array.from({ length: 50 }, (_, i) => `{"id":"ev-${i}"}`);
    const bytes = batch(100n, values, { compression: "gzip", keys: true });
    expect(bytes.readInt16BE(ATTRIBUTES) & 0x07).toBe(1); // gzip
    const { next, records } = read(bytes, 100n);
    expect(records.map((r) => r.value)).toEqual(values);
    expect(records.at(-1)?.offset).toBe(149n);
    expect(next).toBe(150n);
  });

  test("a control batch (a transaction marker) delivers nothing, and the position moves past it", () => {
    const control = batch(5n, ["marker"]);
    control.writeInt16BE(control.readInt16BE(ATTRIBUTES) | 0x20, ATTRIBUTES);
    const { next, records } = read(Buffer.concat([control, batch(6n, ["x"])]), 5n);
    expect(records.map((r) => [r.offset, r.value])).toEqual([[6n, "x"]]);
    expect(next).toBe(7n);
  });

  test("log append time: every record has the batch's max timestamp", () => {
    const bytes = batch(0n, ["a", "b"]);
    bytes.writeInt16BE(bytes.readInt16BE(ATTRIBUTES) | 0x08, ATTRIBUTES);
    bytes.writeBigInt64BE(T0 + 999n, 35);
    expect(read(bytes, 0n).records.map((r) => r.timestampMs)).toEqual([Number(T0) + 999, Number(T0) + 999]);
  });

  test("a record without a value is skipped; the position still moves past it", () => {
    const { next, records } = read(batch(0n, ["a", null, "c"]), 0n);
    expect(records.map((r) => [r.offset, r.value])).toEqual([
      [0n, "a"],
      [2n, "c"],
    ]);
    expect(next).toBe(3n);
  });

  test("a batch in an older format (magic 1) is refused", () => {
    const bytes = batch(0n, ["a"]);
    bytes[16] = 1;
    expectRefused(bytes, "magic 1, not 2");
  });

  test("a record whose length runs past its batch is refused, not read beyond it", () => {
    const bytes = batch(0n, ["a"]);
    bytes[61] = 0x7e; // the first record's length: 63 bytes, more than the batch holds
    expectRefused(bytes, "is cut short");
  });

  test("a varint that never ends is refused", () => {
    const bytes = batch(0n, ["a"]);
    bytes.fill(0xff, 62); // every byte after the record's length has its continuation bit set
    expectRefused(bytes, "varint runs past the record batch");
  });
});

describe("joinedBytes", () => {
  const whole = Buffer.concat([batch(0n, ["a", "bb", "ccc"]), batch(3n, ["dddd", "eeeee"], { keys: true })]);
  /** `whole` as a connection holds it: split into socket chunks (here inside a header and inside a record). */
  const received = (cuts: number[]) => {
    const writer = Writer.create();
    let at = 0;
    for (const cut of [...cuts, whole.length]) {
      writer.append(whole.subarray(at, cut));
      at = cut;
    }
    return writer.dynamicBuffer;
  };

  test("an answer split across socket chunks is read as the joined bytes; the scratch grows once, then is reused", () => {
    const chunks = received([7, 70, 90]);
    expect(chunks.buffers.length).toBeGreaterThan(1);
    const first = joinedBytes(chunks, Buffer.alloc(16));
    expect(first.bytes.equals(whole)).toBe(true);
    expect(first.scratch.length).toBeGreaterThanOrEqual(whole.length);
    const again = joinedBytes(received([30]), first.scratch);
    expect(again.scratch).toBe(first.scratch);
    expect(read(again.bytes, 0n).records.map((r) => r.value)).toEqual(["a", "bb", "ccc", "dddd", "eeeee"]);
  });

  test("one chunk is read where it is: no copy, the scratch untouched", () => {
    const scratch = Buffer.alloc(4);
    const joined = joinedBytes(received([]), scratch);
    expect(joined.bytes.buffer).toBe(whole.buffer);
    expect(joined.scratch).toBe(scratch);
  });
});
