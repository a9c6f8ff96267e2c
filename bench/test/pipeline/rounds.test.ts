import { expect, test } from "bun:test";
import { medianRound, pairedRatio, roundRange } from "../../src/pipeline/rounds.ts";

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

test("pairedRatio: the median of each round's own ratio, from the rounds that have both; none from no such round", () => {
  const rounds = [
    { agent: ship(4), kcatProduce: ship(1) }, // 0.25
    { agent: ship(2), kcatProduce: ship(1) }, // 0.5
    { agent: ship(1) },
    { agent: ship(1), kcatProduce: ship(1) }, // 1
    { agent: ship(3), kcatProduce: ship(2) }, // 0.667
  ];
  expect(pairedRatio(rounds, "agent", "kcatProduce")).toBe(0.5); // 0.25, 0.5, 0.667, 1 → the lower middle
  expect(pairedRatio(rounds.slice(3), "agent", "kcatProduce")).toBe(2 / 3); // 1 and 0.667 → 0.667
  expect(pairedRatio(rounds, "consumer", "kcatConsume")).toBeUndefined();
});
