import { expect, test } from "bun:test";
import { backoffMs } from "../index.ts";

test("doubles from 100 ms per attempt, jittered into the upper half, capped at maxMs", () => {
  for (let round = 0; round < 200; round++) {
    for (const [attempt, base] of [
      [0, 100],
      [1, 200],
      [3, 800],
      [10, 5_000],
      [60, 5_000],
    ] as const) {
      const wait = backoffMs(attempt);
      expect(wait).toBeGreaterThanOrEqual(base / 2);
      expect(wait).toBeLessThanOrEqual(base);
    }
    expect(backoffMs(20, 2_000)).toBeLessThanOrEqual(2_000);
    expect(backoffMs(20, 2_000)).toBeGreaterThanOrEqual(1_000);
  }
});
