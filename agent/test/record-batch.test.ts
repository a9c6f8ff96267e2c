/**
 * The record batch encoder against @platformatic/kafka's own decoder (the one its consumer reads fetches with):
 * every field of every record, the header's producer fields, and a CRC-32C the decoder's table agrees with.
 */
import { describe, expect, test } from "bun:test";
import { crc32c, Reader, readRecordsBatch } from "@platformatic/kafka";
import {
  type BatchMessage,
  encodeRecordBatch,
  RECORD_BATCH_HEADER_BYTES,
  recordCount,
  stampRecordBatch,
} from "../src/record-batch.ts";

const b = (text: string) => Buffer.from(text);

describe("encodeRecordBatch", () => {
  test("records decode as written: keys, values, null key, headers, timestamp deltas, offsets", () => {
    const messages: BatchMessage[] = [
      { key: b("tenant-a"), value: b('{"id":"1"}'), timestamp: 1_700_000_000_000n },
      { key: undefined, value: b("x".repeat(300)), timestamp: 1_700_000_000_000n },
      {
        key: b("tenant-b"),
        value: b("é€ unicode"),
        timestamp: 1_700_000_000_250n,
        headers: new Map([
          [b("reason"), b("not-json")],
          [b("offset"), b("42")],
        ]),
      },
      // Older than the first: a negative delta; the batch's max timestamp stays the largest.
      { key: b(""), value: b(""), timestamp: 1_699_999_999_000n },
    ];
    const batch = encodeRecordBatch(messages);
    stampRecordBatch(batch, 4242n, 3, 17);
    const decoded = readRecordsBatch(Reader.from(batch));
    expect(decoded.length).toBe(batch.length - 12);
    expect(decoded.magic).toBe(2);
    expect(decoded.attributes).toBe(0);
    expect(decoded.lastOffsetDelta).toBe(3);
    expect(decoded.firstTimestamp).toBe(1_700_000_000_000n);
    expect(decoded.maxTimestamp).toBe(1_700_000_000_250n);
    expect(decoded.producerId).toBe(4242n);
    expect(decoded.producerEpoch).toBe(3);
    expect(decoded.firstSequence).toBe(17);
    expect(decoded.crc).toBe(crc32c(batch.subarray(21)));
    expect(decoded.records.map((r) => [r.offsetDelta, Number(r.timestampDelta)])).toEqual([
      [0, 0],
      [1, 0],
      [2, 250],
      [3, -1000],
    ]);
    expect(decoded.records.map((r) => r.key?.toString() ?? null)).toEqual(["tenant-a", null, "tenant-b", ""]);
    expect(decoded.records.map((r) => r.value?.toString())).toEqual(messages.map((m) => m.value?.toString()));
    expect(decoded.records[2]?.headers.map(([k, v]) => [k?.toString(), v?.toString()])).toEqual([
      ["reason", "not-json"],
      ["offset", "42"],
    ]);
    expect(decoded.records[0]?.headers).toEqual([]);
    expect(recordCount(batch)).toBe(4);
  });

  test("lengths needing multi-byte varints (a 64 KiB value, 200 records) are exact", () => {
    const big = Buffer.alloc(65_536, 0x61);
    const messages: BatchMessage[] = Array.from({ length: 200 }, (_, i) => ({
      key: b(`k${i}`),
      value: i === 150 ? big : b(`v${i}`),
      timestamp: 1_700_000_000_000n + BigInt(i * 1_000_000),
    }));
    const batch = encodeRecordBatch(messages);
    stampRecordBatch(batch, 1n, 0, 2 ** 31 - 1);
    const decoded = readRecordsBatch(Reader.from(batch));
    expect(decoded.records).toHaveLength(200);
    expect(decoded.records[150]?.value?.equals(big)).toBe(true);
    expect(decoded.records[199]?.offsetDelta).toBe(199);
    expect(Number(decoded.records[199]?.timestampDelta)).toBe(199_000_000);
    expect(decoded.firstSequence).toBe(2 ** 31 - 1);
  });

  test("every varint length boundary (63/64, 8191/8192, 2^20) decodes as written", () => {
    const sizes = [0, 1, 63, 64, 65, 127, 128, 8191, 8192, 8193, 1 << 20];
    const messages: BatchMessage[] = sizes.map((size, i) => ({
      key: Buffer.alloc(size % 100, 0x6b),
      value: Buffer.alloc(size, 0x61 + (i % 20)),
      timestamp: 1_000n + BigInt(size),
    }));
    const batch = encodeRecordBatch(messages);
    stampRecordBatch(batch, 9n, 1, 0);
    const decoded = readRecordsBatch(Reader.from(batch));
    expect(decoded.records.map((r) => r.value?.length)).toEqual(sizes);
    expect(decoded.records.map((r) => r.key?.length)).toEqual(sizes.map((size) => size % 100));
    expect(decoded.records.map((r) => Number(r.timestampDelta))).toEqual(sizes);
    expect(decoded.records.every((r, i) => r.value?.every((byte) => byte === 0x61 + (i % 20)))).toBe(true);
  });

  test("stamping again (a retry under a new producer id) rewrites the fields and the CRC", () => {
    const batch = encodeRecordBatch([{ key: b("k"), value: b("v"), timestamp: 5n }]);
    stampRecordBatch(batch, 1n, 0, 0);
    const first = readRecordsBatch(Reader.from(batch)).crc;
    stampRecordBatch(batch, 2n, 0, 0);
    const again = readRecordsBatch(Reader.from(batch));
    expect(again.producerId).toBe(2n);
    expect(again.crc).not.toBe(first);
    expect(again.crc).toBe(crc32c(batch.subarray(21)));
    expect(batch.length).toBeGreaterThan(RECORD_BATCH_HEADER_BYTES);
  });

  test("an empty batch is refused", () => {
    expect(() => encodeRecordBatch([])).toThrow(RangeError);
  });
});
