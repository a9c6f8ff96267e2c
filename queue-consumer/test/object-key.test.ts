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
