import { expect, test } from "bun:test";
import { medianRound, roundRange } from "../../src/pipeline/rounds.ts";

const ship = (ms: number, peakRss = 1) => ({ records: 1_000, bytes: 400_000, ms, peakRss });

test("medianRound picks each measure's median round by rate, the lower middle of an even count", () => {
  const rounds = [
    { agent: ship(5), kcatProduce: ship(1) },
    { agent: ship(2) },
    { agent: ship(3), kcatProduce: ship(4) },
  ];
  const median = medianRound(rounds);
  expect(median.agent).toBe(rounds[2]?.agent); // 200k, 333k, 500k → 333k
  expect(median.kcatProduce).toBe(rounds[2]?.kcatProduce); // 1M and 250k → the lower, 250k
  expect(median.consumer).toBeUndefined();
  expect("consumer" in median).toBe(false);
});

test("roundRange: lowest and highest over the rounds that have the measure; none from fewer than two", () => {
  const rounds = [{ agent: ship(5, 7) }, {}, { agent: ship(2, 3) }];
  expect(roundRange(rounds, "agent", (f) => f.peakRss)).toEqual([3, 7]);
  expect(roundRange(rounds, "agent", () => undefined)).toBeUndefined();
  expect(roundRange([{ agent: ship(5) }], "agent", (f) => f.ms)).toBeUndefined();
});
