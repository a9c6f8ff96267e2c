import { expect, test } from "bun:test";
import { objectKey, parseObjectKey } from "../src/object-key.ts";

test("parseObjectKey reads back what objectKey made, gzip or not, under a prefix or none", () => {
  for (const prefix of ["", "tenant-exports/", "a/b/"]) {
    for (const gzip of [false, true]) {
      const parts = {
        prefix,
        topic: "svc.kms.audit.events.v1",
        partition: 17,
        firstOffset: 12_345_678_901n,
        firstTimestampMs: Date.parse("2026-11-23T08:59:59.999Z"),
        gzip,
      };
      expect(parseObjectKey(objectKey(parts), prefix)).toEqual({
        topic: "svc.kms.audit.events.v1",
        day: "2026-11-23",
        hour: "08",
        partition: 17,
        firstOffset: 12_345_678_901n,
        gzip,
      });
    }
  }
});

test("parseObjectKey: any other key is no batch object's", () => {
  const key = objectKey({ prefix: "p/", topic: "t", partition: 1, firstOffset: 5n, firstTimestampMs: 0, gzip: false });
  expect(parseObjectKey(key, "q/")).toBeUndefined();
  for (const other of [
    "p/v1/t/notes/README.txt",
    "p/v1/t/dt=2026-11-23/hour=08/partition=001/5.jsonl",
    "p/v2/t/dt=2026-11-23/hour=08/partition=001/00000000000000000005.jsonl",
    "p/v1/t/dt=2026-11-23/hour=08/partition=001/00000000000000000005.jsonl.zst",
    "p/v1/t/dt=2026-11-23/partition=001/00000000000000000005.jsonl",
  ]) {
    expect({ other, parts: parseObjectKey(other, "p/") }).toEqual({ other, parts: undefined });
  }
});

test("a first timestamp outside years 0000 to 9999 files the batch under the epoch's day and hour (not the writer's clock: a rewrite keeps its key)", () => {
  const keyAt = (firstTimestampMs: number) =>
    objectKey({ prefix: "p/", topic: "t", partition: 2, firstOffset: 7n, firstTimestampMs, gzip: false });
  const partitionOf = (firstTimestampMs: number) => {
    const parts = parseObjectKey(keyAt(firstTimestampMs), "p/");
    return parts && `${parts.day}/${parts.hour}`;
  };
  // The edges stay where they are.
  expect(partitionOf(0)).toBe("1970-01-01/00");
  expect(partitionOf(Date.UTC(10_000, 0, 1) - 1)).toBe("9999-12-31/23");
  expect(partitionOf(Date.parse("0000-01-01T00:00:00Z"))).toBe("0000-01-01/00");
  // Kafka's "no timestamp" stays under the hour before the epoch, where such batches always went.
  expect(partitionOf(-1)).toBe("1969-12-31/23");
  for (const outside of [
    Date.parse("0000-01-01T00:00:00Z") - 1, // -000001-12-31: no YYYY-MM-DD
    Date.UTC(10_000, 0, 1), // +010000-01-01: no YYYY-MM-DD
    8.64e15 + 1, // past any Date: toISOString() would throw
    -8.64e15 - 1,
    Number.MAX_SAFE_INTEGER,
    Number.NaN,
  ]) {
    expect({ outside, partition: partitionOf(outside) }).toEqual({ outside, partition: "1970-01-01/00" });
  }
});
