import { isSensitiveAttribute } from "@svc/audit-record";

/** What a value that looks like a secret is replaced with. */
export const REDACTED = "[redacted]";

/** Largest number of attributes kept on one record; the rest are dropped (counted). */
export const MAX_ATTRIBUTES = 32;
/** Longest attribute value kept (the schema's bound); longer values are cut. */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 4096;
/** Attribute names: ASCII letters, digits, `_`, `.`, `-`, 1–128 characters. */
const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Shapes that mark a value as a secret. Conservative on purpose: each one matches what credentials look like and
 * almost nothing an audit record legitimately holds. The README lists them; change both together.
 */
const SECRET_SHAPES: readonly RegExp[] = [
  /** A compact JWS/JWE (access, ID or refresh token): base64url JSON header `{"...` is `eyJ`. */
  /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\./,
  /** An HTTP credential: `Bearer <token>` or `Basic <user:password>`. */
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/i,
  /** A PEM block (private key, certificate request, ...). */
  /-----BEGIN [A-Z0-9 ]{0,40}-----/,
];

/** A run of base64 / base64url characters long enough to encode 32 bytes or more. */
const LONG_BASE64_RUN = /[A-Za-z0-9+/_-]{43,}={0,2}/g;
/**
 * When such a run counts as random (key material) rather than words: Shannon entropy of at least 4.2 bits per
 * character (random base64 of 32 bytes measures 4.5–5.2; hex, being 16 symbols, at most 4) and at most 60 % lower
 * case (random base64 ≈ 41 %; camelCase names and paths 65–75 %).
 */
const MIN_SECRET_ENTROPY = 4.2;
const MAX_LOWER_CASE_SHARE = 0.6;

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A long base64 run with upper case, lower case and digits mixed, and random-looking (high entropy). */
function hasHighEntropyBase64(value: string): boolean {
  for (const [run] of value.matchAll(LONG_BASE64_RUN)) {
    if (!/[A-Z]/.test(run) || !/[a-z]/.test(run) || !/[0-9]/.test(run)) continue;
    const lowerShare = (run.match(/[a-z]/g) ?? []).length / run.length;
    if (lowerShare <= MAX_LOWER_CASE_SHARE && entropy(run) >= MIN_SECRET_ENTROPY) return true;
  }
  return false;
}

/** Whether `value` looks like a token, a credential, a PEM block or raw key material. */
export function looksLikeSecret(value: string): boolean {
  return SECRET_SHAPES.some((shape) => shape.test(value)) || hasHighEntropyBase64(value);
}

/** `value`, or `[redacted]` when it looks like a secret (the whole value: what surrounds a secret is suspect too). */
export function redactValue(value: string): { value: string; redacted: boolean } {
  return looksLikeSecret(value) ? { value: REDACTED, redacted: true } : { value, redacted: false };
}

export interface SanitizedAttributes {
  attributes: Record<string, string> | undefined;
  /** Attributes left out: a sensitive or malformed name, a value that is not a string, or past `MAX_ATTRIBUTES`. */
  dropped: number;
  /** Values replaced with `[redacted]`. */
  redacted: number;
}

/**
 * The attributes a handler asked for, made safe for a record: a name refused by `isSensitiveAttribute` (or not
 * matching the name pattern) is dropped, a value that looks like a secret becomes `[redacted]`, a long value is cut.
 */
export function sanitizeAttributes(input: Readonly<Record<string, unknown>> | undefined): SanitizedAttributes {
  if (input === undefined) return { attributes: undefined, dropped: 0, redacted: 0 };
  const attributes: Record<string, string> = {};
  let kept = 0;
  let dropped = 0;
  let redacted = 0;
  for (const [name, raw] of Object.entries(input)) {
    if (kept >= MAX_ATTRIBUTES || typeof raw !== "string" || !ATTRIBUTE_NAME.test(name) || isSensitiveAttribute(name)) {
      dropped += 1;
      continue;
    }
    const safe = redactValue(raw);
    if (safe.redacted) redacted += 1;
    attributes[name] = safe.value.slice(0, MAX_ATTRIBUTE_VALUE_LENGTH);
    kept += 1;
  }
  return { attributes: kept > 0 ? attributes : undefined, dropped, redacted };
}
