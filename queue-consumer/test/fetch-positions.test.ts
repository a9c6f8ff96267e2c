import { expect, test } from "bun:test";
import { dropStalePositions } from "../src/fetch-positions.ts";

const positions = () =>
  new Map<string, bigint>([
    ["t:0", 34n],
    ["t:1", 120n],
    ["t:2", 7n],
    ["other:0", 5n],
  ]);

test("a partition held before and after keeps its position (its writer holds what was read)", () => {
  const map = positions();
  expect(dropStalePositions(map, "t", new Set([0, 1, 2]), new Set([0, 1, 2]))).toEqual([]);
  expect(map.get("t:1")).toBe(120n);
});

test("a partition given away loses its position, so coming back it is read from the commit or the start", () => {
  const map = positions();
  expect(dropStalePositions(map, "t", new Set([0, 1, 2]), new Set([1]))).toEqual([0, 2]);
  expect([...map.keys()].sort()).toEqual(["other:0", "t:1"]);
});

test("a newly assigned partition with a position left from an earlier assignment loses it", () => {
  const map = positions();
  // This replica read t:0 to 34, lost it (an assignment it never saw, while frozen), and has it again.
  expect(dropStalePositions(map, "t", new Set([1, 2]), new Set([0, 1, 2]))).toEqual([0]);
  expect(map.has("t:0")).toBe(false);
  expect(map.get("t:2")).toBe(7n);
});

test("another topic's positions are left alone", () => {
  const map = positions();
  dropStalePositions(map, "t", new Set(), new Set());
  expect(map.get("other:0")).toBe(5n);
  expect(map.size).toBe(1);
});
