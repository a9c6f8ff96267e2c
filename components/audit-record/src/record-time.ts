/** RFC 3339 `date-time` with an explicit offset: the shape of a record's `time`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** PostgreSQL refuses an offset of 16 hours or more ("time zone displacement out of range"); real ones are −12 to +14. */
const MAX_OFFSET_HOUR = 15;
const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

/** Two ASCII digits at `at` as a number (the shape is checked first). */
function twoDigits(value: string, at: number): number {
  return (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * A record's `time` in epoch milliseconds (fraction digits past the third truncated, as `Date.parse` reads them), or
 * undefined when it is not the schema's `date-time`: RFC 3339 with an explicit offset, a real calendar date of the
 * years 0001–9999 (PostgreSQL has no year 0000: it refuses the date), hours 00–23, minutes and seconds 00–59 (a
 * leap second's `:60` is refused, as `Date.parse` refuses it), offsets up to ±15:59. Everything it accepts
 * PostgreSQL's `timestamptz` reads as the same instant.
 *
 * Computed from the digits (53 ns a call): `Date.parse` took ~190 ns, 4.6 % of the writer's CPU samples, and it
 * accepts dates that do not exist (2026-02-30 as March 2), which PostgreSQL refuses as it refuses the year 0000:
 * such a record was shipped, and the index write of its batch then failed for good.
 */
export function recordTimeMs(value: string): number | undefined {
  if (!RFC3339.test(value)) return undefined;
  const year =
    (value.charCodeAt(0) - 48) * 1000 +
    (value.charCodeAt(1) - 48) * 100 +
    (value.charCodeAt(2) - 48) * 10 +
    value.charCodeAt(3) -
    48;
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  const hour = twoDigits(value, 11);
  const minute = twoDigits(value, 14);
  const second = twoDigits(value, 17);
  if (year === 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let ms = 0;
  let at = 19;
  if (value.charCodeAt(at) === 0x2e) {
    at += 1;
    for (let scale = 100; scale >= 1; scale /= 10) {
      const c = value.charCodeAt(at);
      if (c < 48 || c > 57) break;
      ms += (c - 48) * scale;
      at += 1;
    }
    while (value.charCodeAt(at) >= 48 && value.charCodeAt(at) <= 57) at += 1;
  }
  let offsetMinutes = 0;
  if (value.charCodeAt(at) !== 0x5a) {
    const offsetHour = twoDigits(value, at + 1);
    const offsetMinute = twoDigits(value, at + 4);
    if (offsetHour > MAX_OFFSET_HOUR || offsetMinute > 59) return undefined;
    offsetMinutes = (value.charCodeAt(at) === 0x2d ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const minutes = hour * 60 + minute - offsetMinutes;
  return daysFromCivil(year, month, day) * MS_PER_DAY + minutes * MS_PER_MINUTE + second * 1000 + ms;
}
