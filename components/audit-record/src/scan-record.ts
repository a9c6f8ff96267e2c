/**
 * The hot path's record check, on the line's bytes: JSON syntax and `AuditRecordSchema` in one pass, with no
 * string decoding and no object built (`JSON.parse` of a 400-byte line costs about 2 µs here; this scan a
 * fraction of that). Like `surelyValidRecord`, it may refuse a valid record (the caller then parses the line and
 * asks the schema, which decides and says why) but never accepts a line that `JSON.parse` + the schema refuse:
 *
 * - strings must be printable ASCII without escapes (so their length in bytes is their `.length`, and they are
 *   valid UTF-8); a line with `\` or a byte outside 0x20–0x7e inside a string goes the slow way;
 * - exactly the schema's fields, each once, with its type and length bounds; `duration_ms` a plain decimal
 *   (`0`, `12`, `0.25`: no sign, no exponent, at most 30 characters, so finite and ≥ 0);
 * - `attributes`, when present, an object of string values (≤ 4096); the names are handed to `attributeName`
 *   (the sensitive-name check) and a `false` from it refuses the line;
 * - nothing but JSON whitespace after the closing brace.
 *
 * `time` is only located here; the caller checks its format (`recordTimeMs`), as the schema's `date-time`
 * format does. Every string field is located (`ScanResult`): the agent reads the tenants (the record key), the
 * writer the index fields, without decoding the rest.
 * `test/scan-record.test.ts` holds it against `JSON.parse` + `validateRecord`, by cases and by mutation (and the
 * agent's `test/classify-line.test.ts` its use there).
 */
/** Where a scanned record's string fields are: bytes `start[f]` to `end[f]` of the line (the value, no quotes). */
export interface ScanResult {
  start: Int32Array;
  end: Int32Array;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

// Fields: index = bit (the order of FIELDS). [name, minLength, maxLength]; duration_ms and attributes apart.
const F_DURATION = 6;
const F_ATTRIBUTES = 10;
/** Index in `ScanResult.start`/`end` of each string field (the order of FIELDS). */
export const SCANNED_FIELD = {
  id: 0,
  time: 1,
  source: 2,
  action: 3,
  resource: 4,
  result: 5,
  claimed_tenant_id: 7,
  principal_id: 8,
  tenant_id: 9,
} as const;
const FIELDS: readonly (readonly [string, number, number])[] = [
  ["id", 1, 128],
  ["time", 1, 64],
  ["source", 1, 64],
  ["action", 1, 256],
  ["resource", 0, 1024],
  ["result", 1, 64],
  ["duration_ms", 0, 0],
  ["claimed_tenant_id", 0, 256],
  ["principal_id", 0, 256],
  ["tenant_id", 0, 256],
  ["attributes", 0, 0],
];
const REQUIRED = (1 << F_ATTRIBUTES) - 1;

/** A result to scan into (reused line after line: every string field of an accepted line is set). */
export function newScanResult(): ScanResult {
  return { start: new Int32Array(F_ATTRIBUTES), end: new Int32Array(F_ATTRIBUTES) };
}
const NAMES = FIELDS.map(([name]) => Buffer.from(name));
const MIN = FIELDS.map(([, min]) => min);
const MAX = FIELDS.map(([, , max]) => max);
/** Field indexes by name length (names are short: a linear look among one or two). */
const BY_LENGTH: number[][] = [];
for (let f = 0; f < NAMES.length; f += 1) {
  const length = (NAMES[f] as Buffer).length;
  if (BY_LENGTH[length] === undefined) BY_LENGTH[length] = [];
  (BY_LENGTH[length] as number[]).push(f);
}
const MAX_ATTRIBUTE = 4096;
const MAX_NUMBER = 30;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/** The first index from `i` that is not JSON whitespace (`n` at most). */
function skipSpace(b: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = b[i] as number;
    // Every whitespace byte is ≤ 0x20: one comparison for the usual byte that is none.
    if (c > 0x20 || !isSpace(c)) return i;
    i += 1;
  }
  return i;
}

/** Per byte inside a string: 0 plain (printable ASCII), 1 the closing quote, 2 anything else (escape, control, non-ASCII). */
const IN_STRING = new Uint8Array(256).fill(2);
IN_STRING.fill(0, 0x20, 0x7f);
IN_STRING[QUOTE] = 1;
IN_STRING[BACKSLASH] = 2;

/** End (index of the closing quote) of the string whose first character is at `i`, or -1 when not plain ASCII. */
function stringEnd(b: Uint8Array, i: number, n: number): number {
  while (i < n && IN_STRING[b[i] as number] === 0) i += 1;
  return i < n && b[i] === QUOTE ? i : -1;
}

function fieldOf(b: Uint8Array, start: number, end: number): number {
  const candidates = BY_LENGTH[end - start];
  if (candidates === undefined) return -1;
  for (const f of candidates) {
    const name = NAMES[f] as Buffer;
    let k = 0;
    while (k < name.length && b[start + k] === name[k]) k += 1;
    if (k === name.length) return f;
  }
  return -1;
}

/** End of a plain non-negative decimal starting at `i` (`0`, `12`, `3.25`), or -1. */
function numberEnd(b: Uint8Array, i: number, n: number): number {
  const start = i;
  if (i >= n) return -1;
  let c = b[i] as number;
  if (c === ZERO) i += 1;
  else if (c > ZERO && c <= NINE) {
    while (i < n && (b[i] as number) >= ZERO && (b[i] as number) <= NINE) i += 1;
  } else return -1;
  if (i < n && b[i] === DOT) {
    i += 1;
    const digits = i;
    while (i < n && (b[i] as number) >= ZERO && (b[i] as number) <= NINE) i += 1;
    if (i === digits) return -1;
  }
  c = i < n ? (b[i] as number) : 0;
  // An exponent, a digit after a leading 0, or a stray character: not plain (the slow path decides).
  if (c !== COMMA && c !== CLOSE && !isSpace(c)) return -1;
  return i - start > MAX_NUMBER ? -1 : i;
}

/**
 * True when `b` (one line, without its newline) is surely a valid record; `out` then holds where each of its string
 * fields is (`SCANNED_FIELD`; every one is required, so every one is set). `attributeName(b, start, end)` is asked
 * about each attribute name; false refuses the line. The line may be bytes `from` to `to` of `b` (a batch of lines:
 * no view made per line); the positions in `out` are then offsets in `b`. Bytes past `to` may be read while a line
 * is refused, never to accept one: every field ends before `to`, and the line must end at `to`.
 */
export function scanRecord(
  b: Uint8Array,
  out: ScanResult,
  attributeName: (b: Uint8Array, start: number, end: number) => boolean,
  from = 0,
  to = b.length,
): boolean {
  const n = to;
  let i = skipSpace(b, from, n);
  if (b[i] !== OPEN) return false;
  let seen = 0;
  for (;;) {
    i = skipSpace(b, i + 1, n);
    if (b[i] !== QUOTE) return false;
    const keyStart = i + 1;
    const keyEnd = stringEnd(b, keyStart, n);
    if (keyEnd < 0) return false;
    const field = fieldOf(b, keyStart, keyEnd);
    if (field < 0 || (seen & (1 << field)) !== 0) return false;
    seen |= 1 << field;
    i = skipSpace(b, keyEnd + 1, n);
    if (b[i] !== COLON) return false;
    i = skipSpace(b, i + 1, n);
    if (field === F_DURATION) {
      i = numberEnd(b, i, n);
      if (i < 0) return false;
    } else if (field === F_ATTRIBUTES) {
      i = attributesEnd(b, i, n, attributeName);
      if (i < 0) return false;
    } else {
      if (b[i] !== QUOTE) return false;
      const start = i + 1;
      const end = stringEnd(b, start, n);
      if (end < 0) return false;
      const length = end - start;
      if (length < (MIN[field] as number) || length > (MAX[field] as number)) return false;
      out.start[field] = start;
      out.end[field] = end;
      i = end + 1;
    }
    i = skipSpace(b, i, n);
    const c = b[i];
    if (c === COMMA) continue;
    if (c !== CLOSE) return false;
    break;
  }
  if (skipSpace(b, i + 1, n) !== n) return false;
  return (seen & REQUIRED) === REQUIRED;
}

/** End (after `}`) of an attributes object starting at `i`: string values of at most 4096 characters, or -1. */
function attributesEnd(
  b: Uint8Array,
  i: number,
  n: number,
  attributeName: (b: Uint8Array, start: number, end: number) => boolean,
): number {
  if (b[i] !== OPEN) return -1;
  i = skipSpace(b, i + 1, n);
  if (b[i] === CLOSE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const nameStart = i + 1;
    const nameEnd = stringEnd(b, nameStart, n);
    if (nameEnd < 0 || !attributeName(b, nameStart, nameEnd)) return -1;
    i = skipSpace(b, nameEnd + 1, n);
    if (b[i] !== COLON) return -1;
    i = skipSpace(b, i + 1, n);
    if (b[i] !== QUOTE) return -1;
    const valueEnd = stringEnd(b, i + 1, n);
    if (valueEnd < 0 || valueEnd - (i + 1) > MAX_ATTRIBUTE) return -1;
    i = skipSpace(b, valueEnd + 1, n);
    const c = b[i];
    if (c === CLOSE) return i + 1;
    if (c !== COMMA) return -1;
    i = skipSpace(b, i + 1, n);
  }
}
