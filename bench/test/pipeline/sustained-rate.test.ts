import { describe, expect, test } from "bun:test";
import { sustainedRate } from "../../src/pipeline/sustained-rate.ts";

describe("sustainedRate", () => {
  test("leaves out the start and the tail: only the objects between the 10 % and the 90 % moments count", () => {
    // 1,000 records: a slow start (100 at 2 s), 100 per 100 ms from 2.1 s, a tail object 1 s after the 900th.
    const objects = [{ atMs: 2_000, records: 100 }];
    for (let k = 1; k <= 8; k += 1) objects.push({ atMs: 2_000 + k * 100, records: 100 });
    objects.push({ atMs: 3_800, records: 100 });
    const rate = sustainedRate(objects, 1_000);
    expect(rate).toEqual({ records: 800, ms: 800, perSecond: 1_000 });
  });

  test("reads the objects in time order and counts one millisecond's objects as one step", () => {
    const objects = [
      { atMs: 500, records: 50 },
      { atMs: 0, records: 20 },
      { atMs: 0, records: 10 },
      { atMs: 1_000, records: 20 },
    ];
    // 30 % durable at 0 ms opens the window with both objects of that millisecond; 80 % at 500 ms closes it.
    expect(sustainedRate(objects, 100, 0.25, 0.8)).toEqual({ records: 50, ms: 500, perSecond: 100 });
  });

  test("is undefined when the records never reach the window's end or one object fills it", () => {
    expect(sustainedRate([{ atMs: 0, records: 50 }], 100)).toBeUndefined();
    expect(sustainedRate([{ atMs: 0, records: 100 }], 100)).toBeUndefined();
    expect(sustainedRate([], 100)).toBeUndefined();
  });

  test("refuses a window outside [0, 1] or closed before it opens", () => {
    expect(() => sustainedRate([], 100, 0.9, 0.1)).toThrow(RangeError);
    expect(() => sustainedRate([], 100, -0.1, 0.9)).toThrow(RangeError);
    expect(() => sustainedRate([], 100, 0.1, 1.5)).toThrow(RangeError);
  });
});
