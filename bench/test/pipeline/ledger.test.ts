import { expect, test } from "bun:test";
import { makeRecord } from "../../src/pipeline/generate-records.ts";
import { checkLedger, seqOfId } from "../../src/pipeline/ledger.ts";

test("seqOfId reads the sequence number of a generated id", () => {
  expect(seqOfId(makeRecord("bench-1a2b", 42, Date.now()).id)).toBe(42);
  expect(seqOfId("something-else")).toBeUndefined();
});

test("checkLedger counts stored ids once and lists the missing ones", () => {
  const ids = [0, 1, 1, 3, 4, 4, 4, 9].map((seq) => makeRecord("r", seq, 0).id);
  const check = checkLedger(6, [...ids, "foreign-id"]);
  expect(check.stored).toBe(4);
  expect(check.missingCount).toBe(2);
  expect(check.missing).toEqual([2, 5]);
  expect(checkLedger(3, ids.slice(0, 4), 0)).toMatchObject({ stored: 2, missingCount: 1, missing: [] });
});
