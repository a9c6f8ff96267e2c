import { expect, test } from "bun:test";
import { BatchGc } from "../src/batch-gc.ts";

test("a full collection at most once per interval, young ones between", () => {
  const asked: boolean[] = [];
  let now = 5_000;
  const gc = new BatchGc(
    (full) => asked.push(full),
    () => now,
    1_000,
  );
  gc.afterBatch(); // the first is full
  now += 400;
  gc.afterBatch();
  now += 599;
  gc.afterBatch(); // 999 ms after the full one
  now += 1;
  gc.afterBatch(); // 1,000 ms after it
  now += 10;
  gc.afterBatch();
  expect(asked).toEqual([true, false, false, true, false]);
});

test("the default asks Bun.gc: full first, young within the interval", () => {
  const gc = new BatchGc();
  expect(gc.afterBatch()).toBe(true);
  expect(gc.afterBatch()).toBe(false);
});
