import { expect, test } from "bun:test";
import { microsTime, microTime } from "../src/micro-time.ts";

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
