import { expect, test } from "bun:test";
import { compareTimeId, microsTime, microTime } from "../src/micro-time.ts";

test("microsTime prints epoch microseconds as the index's time form, the same as microTime of the RFC 3339 time", () => {
  const times = [
    "2026-10-01T00:00:00Z",
    "2026-10-01T12:34:56.000001Z",
    "2026-10-01T23:59:59.999999Z",
    "2024-02-29T08:00:00.5+09:00",
    "1970-01-01T00:00:00Z",
  ];
  for (const time of times) {
    const text = microTime(time);
    const micros = Date.parse(`${text.slice(0, 19)}Z`) * 1000 + Number(text.slice(20, 26));
    expect(microsTime(micros)).toBe(text);
  }
  expect(microsTime(1_790_000_000_123_456)).toBe("2026-09-21T14:13:20.123456Z");
});

test("microTime: UTC with microseconds as timestamptz holds it (offsets, padding, rounding with carry)", () => {
  expect(microTime("2026-09-09T18:00:00+09:00")).toBe("2026-09-09T09:00:00.000000Z");
  expect(microTime("2026-09-09T09:00:00.25Z")).toBe("2026-09-09T09:00:00.250000Z");
  expect(microTime("2026-09-09T09:00:00.1234564Z")).toBe("2026-09-09T09:00:00.123456Z");
  expect(microTime("2026-09-09T09:00:00.1234565Z")).toBe("2026-09-09T09:00:00.123457Z");
  expect(microTime("2026-12-31T23:59:59.9999999Z")).toBe("2027-01-01T00:00:00.000000Z");
  expect(() => microTime("yesterday")).toThrow();
});

test("compareTimeId: time, then id in UTF-8 byte order (the index's C collation)", () => {
  const t = "2026-09-09T09:00:00.000000Z";
  expect(compareTimeId({ time: t, id: "B" }, { time: t, id: "a" })).toBeLessThan(0);
  // U+FF5E (3 UTF-8 bytes) sorts before U+1F600 (4 bytes, a surrogate pair in UTF-16) in bytes, not in UTF-16.
  expect(compareTimeId({ time: t, id: "\uff5e" }, { time: t, id: "\u{1f600}" })).toBeLessThan(0);
  expect(compareTimeId({ time: "2026-09-09T09:00:00.000001Z", id: "a" }, { time: t, id: "z" })).toBeGreaterThan(0);
});

test("compareTimeId orders ids as their UTF-8 bytes do, for prefixes, BMP and astral code points alike", () => {
  const t = "2026-09-09T09:00:00.000000Z";
  const ids = ["", "a", "ab", "abc", "b", "B", "\u00e9", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uff5e", "\uffff"];
  ids.push("\u{10000}", "\u{1f600}", "\u{10ffff}", "a\u{1f600}", "a\uffff", "ev-000000001", "ev-000000010");
  for (const x of ids) {
    for (const y of ids) {
      const bytes = Math.sign(Buffer.compare(Buffer.from(x, "utf8"), Buffer.from(y, "utf8")));
      expect([x, y, Math.sign(compareTimeId({ time: t, id: x }, { time: t, id: y }))]).toEqual([x, y, bytes]);
    }
  }
});
