import { expect, test } from "bun:test";
import { recordTimeMs, ScannedTime } from "../index.ts";

const at = (text: string, pad = 5) => {
  const b = Buffer.from(`${"x".repeat(pad)}${text}yy`, "latin1");
  return [b, pad, pad + text.length] as const;
};

test("reads a well-formed time's text and milliseconds, and gives the same string while the bytes repeat", () => {
  const times = new ScannedTime();
  expect(times.read(...at("2026-11-27T22:39:00.123Z"))).toBe(true);
  expect(times.time).toBe("2026-11-27T22:39:00.123Z");
  expect(times.timeMs).toBe(Date.UTC(2026, 10, 27, 22, 39, 0, 123));
  const first = times.time;
  expect(times.read(...at("2026-11-27T22:39:00.123Z", 11))).toBe(true);
  expect(times.time).toBe(first);
  expect(times.read(...at("2026-11-27T22:39:00.124+01:00"))).toBe(true);
  expect(times.time).toBe("2026-11-27T22:39:00.124+01:00");
  expect(times.timeMs).toBe(recordTimeMs("2026-11-27T22:39:00.124+01:00") as number);
});

test("refuses what recordTimeMs refuses and keeps the last well-formed time", () => {
  const times = new ScannedTime();
  expect(times.read(...at("2026-11-27T22:39:00Z"))).toBe(true);
  for (const bad of ["2026-02-30T00:00:00Z", "2026-11-27T22:39:00", "0000-01-01T00:00:00Z", "2026-11-27T22:39:00.5"]) {
    expect(times.read(...at(bad))).toBe(false);
    expect(times.time).toBe("2026-11-27T22:39:00Z");
  }
  // One byte differs from the kept time (same length): read again, not taken for it.
  expect(times.read(...at("2026-11-27T22:39:01Z"))).toBe(true);
  expect(times.timeMs).toBe(Date.UTC(2026, 10, 27, 22, 39, 1));
  expect(times.read(...at(""))).toBe(false);
});

test("keeps a copy of the bytes: the caller's buffer may be overwritten", () => {
  const times = new ScannedTime();
  const [b, start, end] = at("2026-11-27T22:39:00Z");
  expect(times.read(b, start, end)).toBe(true);
  b.write("2026-11-27T22:39:09Z", start, "latin1");
  expect(times.read(b, start, end)).toBe(true);
  expect(times.time).toBe("2026-11-27T22:39:09Z");
  b.write("2026-13-27T22:39:09Z", start, "latin1");
  expect(times.read(b, start, end)).toBe(false);
});
