import { describe, expect, test } from "bun:test";
import { countOf, histogramOf, objectsPerHour, percentile, ratePerSecond } from "../../src/pipeline/percentiles.ts";

describe("percentile (nearest rank)", () => {
  test("of 1..100 is the rank itself", () => {
    const h = histogramOf(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(percentile(h, 50)).toBe(50);
    expect(percentile(h, 99)).toBe(99);
    expect(percentile(h, 100)).toBe(100);
    expect(percentile(h, 0)).toBe(1);
    expect(countOf(h)).toBe(100);
  });

  test("weights repeated values and ignores insertion order", () => {
    const h = histogramOf([900, 5, 5, 5, 5, 5, 5, 5, 5, 5]);
    expect(percentile(h, 50)).toBe(5);
    expect(percentile(h, 90)).toBe(5);
    expect(percentile(h, 91)).toBe(900);
  });

  test("of nothing is undefined, and p outside [0, 100] throws", () => {
    expect(percentile(new Map(), 50)).toBeUndefined();
    expect(() => percentile(histogramOf([1]), 101)).toThrow(RangeError);
    expect(() => percentile(histogramOf([1]), Number.NaN)).toThrow(RangeError);
  });
});

describe("objectsPerHour", () => {
  test("one object every 9 s is 400 per hour, every 10 s is 360", () => {
    expect(objectsPerHour([0, 9_000, 18_000, 27_000])).toBe(400);
    expect(objectsPerHour([20_000, 0, 10_000])).toBe(360);
  });

  test("the run's first and last objects (partial windows) are left out from four objects on", () => {
    // Every 10 s, but the writes stopped 4 s into the last window: its newest record is no cut.
    expect(objectsPerHour([0, 10_000, 20_000, 30_000, 34_000])).toBe(360);
    // An extra object inside the run still counts.
    expect(objectsPerHour([0, 10_000, 15_000, 20_000, 30_000])).toBe(720);
    expect(objectsPerHour([0, 10_000, 19_950])).toBeCloseTo(360.9, 1);
  });

  test("needs two objects over a positive span", () => {
    expect(objectsPerHour([])).toBeUndefined();
    expect(objectsPerHour([5])).toBeUndefined();
    expect(objectsPerHour([5, 5])).toBeUndefined();
  });
});

test("ratePerSecond", () => {
  expect(ratePerSecond(1_000_000, 4_000)).toBe(250_000);
  expect(ratePerSecond(10, 0)).toBe(0);
});

test("records never durable count as infinitely late", () => {
  const h = histogramOf([10, 20, 30]);
  h.set(Number.POSITIVE_INFINITY, 1);
  expect(percentile(h, 50)).toBe(20);
  expect(percentile(h, 99)).toBe(Number.POSITIVE_INFINITY);
});
