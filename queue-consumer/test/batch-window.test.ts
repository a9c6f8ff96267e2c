import { describe, expect, test } from "bun:test";
import { batchWindowEnd } from "../src/batch-window.ts";

describe("batchWindowEnd", () => {
  test("a batch is due at the end of its window: after it opened, at most one window later", () => {
    for (const partition of [0, 1, 5, 63]) {
      for (const openedAt of [0, 1, 999.5, 10_000, 123_456.789, 9_999_999]) {
        const due = batchWindowEnd(openedAt, 1_000, partition);
        expect(due).toBeGreaterThan(openedAt);
        expect(due - openedAt).toBeLessThanOrEqual(1_000);
      }
    }
  });

  test("a busy partition's batches are due exactly one window apart, however late each one opened", () => {
    for (const partition of [0, 3, 7]) {
      let due = batchWindowEnd(0, 10_000, partition);
      for (let i = 0; i < 50; i += 1) {
        // The next batch opens with the first record after the seal: 0–40 ms later.
        const next = batchWindowEnd(due + ((i * 7) % 40), 10_000, partition);
        expect(next - due).toBeCloseTo(10_000, 6);
        due = next;
      }
    }
  });

  test("a batch opened exactly at a window's end gets the whole next window", () => {
    const end = batchWindowEnd(0, 1_000, 2);
    expect(batchWindowEnd(end, 1_000, 2)).toBeCloseTo(end + 1_000, 6);
  });

  test("partitions are spread over the window: six never closer than a twelfth of it", () => {
    const shifts = [0, 1, 2, 3, 4, 5].map((p) => batchWindowEnd(0, 12_000, p) % 12_000).sort((a, b) => a - b);
    const gaps = shifts.map((shift, i) => ((shifts[(i + 1) % shifts.length] as number) - shift + 12_000) % 12_000);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
  });
});
