import { expect, test } from "bun:test";
import { groupRuns, type StepColumns } from "../src/step-runs.ts";

const columns = (o: number[], s: number[], l: number[], us: (number | null)[], t: string[] | null = null) =>
  ({ o, s, l, us, t, ids: null }) satisfies StepColumns;

test("rows back to back in one object are one run; another object or a gap starts the next", () => {
  // Lines of 10 bytes + newline: rows 0 and 1 touch, row 2 leaves a gap, row 3 is another object.
  const runs = groupRuns(columns([1, 1, 1, 2], [0, 11, 30, 0], [10, 10, 5, 3], [1, 2, 3, 4]), ["a", "b", "c", "d"]);
  expect(runs?.map(({ objectId, start, end, lines, firstId }) => ({ objectId, start, end, lines, firstId }))).toEqual([
    { objectId: 1, start: 0, end: 22, lines: 2, firstId: "a" },
    { objectId: 1, start: 30, end: 36, lines: 1, firstId: "c" },
    { objectId: 2, start: 0, end: 4, lines: 1, firstId: "d" },
  ]);
  expect(runs?.map((run) => run.last.id)).toEqual(["b", "c", "d"]);
});

test("text times (after 2106) belong to the last rows and sort after float times", () => {
  const runs = groupRuns(columns([1, 1], [0, 4], [3, 3], [5, null], ["2107-01-01T00:00:00.000000Z"]), ["x", "y"]);
  expect(runs?.[0]?.last.time).toBe("2107-01-01T00:00:00.000000Z");
  expect(runs?.[0]?.lines).toBe(2);
});

test("rows out of (time, id) order are refused, not grouped", () => {
  expect(groupRuns(columns([1, 1], [0, 4], [3, 3], [2, 1]), ["a", "b"])).toBeUndefined();
  expect(groupRuns(columns([1, 1], [0, 4], [3, 3], [1, 1]), ["b", "a"])).toBeUndefined();
  expect(
    groupRuns(columns([1, 1], [0, 4], [3, 3], [null, 1], ["2107-01-01T00:00:00.000000Z"]), ["a", "b"]),
  ).toBeUndefined();
});
