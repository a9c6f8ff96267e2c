import { expect, test } from "bun:test";
import { planReads, type VersionSpan } from "../src/read-plan.ts";

const span = (key: string, start: number, end: number, versionId = "v1"): VersionSpan => ({
  bucket: "b",
  key,
  versionId,
  start,
  end,
});

test("spans of one version closer than the merge distance share a GET; farther ones get their own", () => {
  const items = [span("k", 0, 100), span("k", 150, 200), span("k", 1_000, 1_100), span("k", 1_100, 1_200)];
  const reads = planReads(items, (s) => s, 50);
  expect(reads.map(({ start, end, indices }) => ({ start, end, indices }))).toEqual([
    { start: 0, end: 200, indices: [0, 1] },
    { start: 1_000, end: 1_200, indices: [2, 3] },
  ]);
});

test("versions are read apart, in any input order; indices point into the input", () => {
  const items = [span("k", 500, 600), span("k", 0, 10, "v2"), span("k", 0, 100), span("j", 0, 10)];
  const reads = planReads(items, (s) => s, 1_000);
  expect(reads.map((r) => [r.key, r.versionId, r.start, r.end, r.indices])).toEqual([
    ["k", "v1", 0, 600, [2, 0]],
    ["k", "v2", 0, 10, [1]],
    ["j", "v1", 0, 10, [3]],
  ]);
});

test("a gzip object is one read whatever the distance; overlapping spans keep the larger end", () => {
  const gz = planReads([span("o.jsonl.gz", 0, 10), span("o.jsonl.gz", 9_000_000, 9_000_010)], (s) => s, 0);
  expect(gz.map((r) => r.indices)).toEqual([[0, 1]]);
  const overlap = planReads([span("k", 0, 500), span("k", 100, 200)], (s) => s, 0);
  expect(overlap.map(({ start, end }) => ({ start, end }))).toEqual([{ start: 0, end: 500 }]);
});

test("nothing to read plans nothing", () => {
  expect(planReads([], (s: VersionSpan) => s, 10)).toEqual([]);
});
