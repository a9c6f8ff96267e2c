import { normaliseRfc3339 } from "./rfc3339.ts";

const pad = (value: number | bigint, width = 2) => String(value).padStart(width, "0");

/**
 * An RFC 3339 time as PostgreSQL's `timestamptz` holds it and the index reader prints it: UTC, microseconds
 * (`YYYY-MM-DDTHH:MM:SS.ffffffZ`; digits beyond the sixth rounded, half up). Tail records carry this form, so they
 * sort, compare and page exactly as the same record does once it is indexed. Throws when `time` does not parse.
 */
export function microTime(time: string): string {
  const utc = normaliseRfc3339("time", time);
  const dot = utc.indexOf(".");
  const whole = dot === -1 ? utc.slice(0, -1) : utc.slice(0, dot);
  const fraction = dot === -1 ? "" : utc.slice(dot + 1, -1);
  let micros = BigInt(Date.parse(`${whole}Z`)) * 1000n + BigInt(fraction.slice(0, 6).padEnd(6, "0"));
  if (fraction.length > 6 && Number(fraction[6]) >= 5) micros += 1n;
  const date = new Date(Number(micros / 1000n));
  date.setUTCMilliseconds(0);
  const sub = micros % 1_000_000n;
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(sub, 6)}Z`
  );
}

/**
 * The same form from microseconds since the epoch (the index reader selects `time` so: a number per row instead of
 * PostgreSQL's `to_char`, and the string is built only for the rows whose time is used).
 */
export function microsTime(micros: number): string {
  const sub = ((micros % 1_000_000) + 1_000_000) % 1_000_000;
  const seconds = new Date((micros - sub) / 1000).toISOString().slice(0, 19);
  return `${seconds}.${pad(sub, 6)}Z`;
}

/** The index's order: `time` (same fixed form), then `id` as the C collation compares it (UTF-8 bytes). */
export function compareTimeId(a: { time: string; id: string }, b: { time: string; id: string }): number {
  if (a.time !== b.time) return a.time < b.time ? -1 : 1;
  return compareUtf8(a.id, b.id);
}

/**
 * Two strings in UTF-8 byte order without encoding them (ids at one time are compared often: many records share a
 * millisecond). Up to the first differing UTF-16 unit the strings are equal; there, two units outside the surrogate
 * range are two BMP code points, whose order is their UTF-8 bytes' order; a surrogate (a code point above U+FFFF)
 * is left to the bytes.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x & 0xf800) === 0xd800 || (y & 0xf800) === 0xd800) {
      return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/**
 * The index's order on raw index columns: `us` (epoch µs, for times before the float cut-off) sorts before any text
 * time `t` (fixed-width UTC, the later times), then `id` as `compareUtf8`. Page rows and export steps are checked
 * with it without building their time strings.
 */
export function compareRawPosition(
  aUs: number | null,
  aT: string | null,
  aId: string,
  bUs: number | null,
  bT: string | null,
  bId: string,
): number {
  if (aUs !== null && bUs !== null) {
    if (aUs !== bUs) return aUs - bUs;
  } else if (aUs !== null) {
    return -1;
  } else if (bUs !== null) {
    return 1;
  } else if (aT !== bT) {
    return (aT as string) < (bT as string) ? -1 : 1;
  }
  return compareUtf8(aId, bId);
}
