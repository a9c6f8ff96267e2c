import { expect, test } from "bun:test";
import { seededRandom } from "@svc/testkit";
import { recordTimeMs } from "../index.ts";

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** A valid RFC 3339 time: any year 0001–9999, a real date, 0–9 fraction digits, Z or an offset up to ±15:59. */
function validTime(next: () => number): string {
  const int = (below: number) => Math.floor(next() * below);
  const year = 1 + int(9_999);
  const month = 1 + int(12);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  const day = 1 + int(days);
  const digits = int(10);
  const fraction = digits === 0 ? "" : `.${pad(int(10 ** digits), digits)}`;
  const offset = int(3) === 0 ? "Z" : `${next() < 0.5 ? "+" : "-"}${pad(int(16), 2)}:${pad(int(60), 2)}`;
  const clock = `${pad(int(24), 2)}:${pad(int(60), 2)}:${pad(int(60), 2)}`;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${clock}${fraction}${offset}`;
}

test("a valid time gives the same epoch milliseconds as Date.parse (100,000 random times, years 0001–9999)", () => {
  const next = seededRandom(20261126);
  const differing: string[] = [];
  for (let i = 0; i < 100_000; i++) {
    const time = validTime(next);
    if (recordTimeMs(time) !== Date.parse(time)) differing.push(time);
  }
  expect(differing).toEqual([]);
});

test.each<[string, number]>([
  ["1970-01-01T00:00:00Z", 0],
  ["2026-11-26T15:21:09.123Z", Date.UTC(2026, 10, 26, 15, 21, 9, 123)],
  ["2024-02-29T00:00:00Z", Date.UTC(2024, 1, 29)],
  ["2000-02-29T23:59:59.999999999Z", Date.UTC(2000, 1, 29, 23, 59, 59, 999)],
  ["1969-12-31T23:59:59.9995Z", -1],
  ["0001-01-01T00:00:00Z", -62_135_596_800_000],
  ["0001-01-01T00:30:00+01:00", -62_135_598_600_000],
  ["9999-12-31T23:59:59.999-15:59", Date.UTC(9999, 11, 31, 39, 58, 59, 999)],
  ["2026-01-01T00:30:00+01:00", Date.UTC(2025, 11, 31, 23, 30)],
  ["2026-01-01T00:00:00-00:00", Date.UTC(2026, 0, 1)],
  ["2026-01-01T00:00:00.1Z", Date.UTC(2026, 0, 1, 0, 0, 0, 100)],
])("%s is %d ms", (time, ms) => {
  expect(recordTimeMs(time)).toBe(ms);
});

test.each([
  ["a date that does not exist (Date.parse reads it as March 2)", "2026-02-30T00:00:00Z"],
  ["February 29 of a common year", "2026-02-29T00:00:00Z"],
  ["February 29 of a century that is not a leap year", "1900-02-29T00:00:00Z"],
  ["April 31", "2026-04-31T00:00:00Z"],
  ["the year 0000 (PostgreSQL refuses it)", "0000-01-01T00:00:00Z"],
  ["month 13", "2026-13-01T00:00:00Z"],
  ["month 00", "2026-00-01T00:00:00Z"],
  ["day 00", "2026-01-00T00:00:00Z"],
  ["hour 24 (ISO 8601's end of day, not RFC 3339)", "2026-01-01T24:00:00Z"],
  ["minute 60", "2026-01-01T23:60:00Z"],
  ["a leap second", "2016-12-31T23:59:60Z"],
  ["an offset of 16 hours (PostgreSQL refuses it)", "2026-01-01T00:00:00+16:00"],
  ["an offset of 24 hours", "2026-01-01T00:00:00-24:00"],
  ["an offset minute 60", "2026-01-01T00:00:00+01:60"],
  ["no offset", "2026-01-01T00:00:00"],
  ["a lowercase t", "2026-01-01t00:00:00Z"],
  ["ten fraction digits", "2026-01-01T00:00:00.1234567890Z"],
  ["an empty fraction", "2026-01-01T00:00:00.Z"],
  ["a five-digit year", "12026-01-01T00:00:00Z"],
  ["a trailing newline", "2026-01-01T00:00:00Z\n"],
  ["words", "yesterday"],
])("%s is not a record time", (_, time) => {
  expect(recordTimeMs(time)).toBeUndefined();
});
