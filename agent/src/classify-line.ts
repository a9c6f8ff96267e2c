import { defaultPartitioner } from "@platformatic/kafka/clients/producer";
import {
  type AuditRecord,
  isSensitiveAttribute,
  newScanResult,
  SCANNED_FIELD,
  ScannedTime,
  scanRecord,
  validateRecord,
} from "@svc/audit-record";
import { ByteSlots } from "@svc/common";
import { surelyValidRecord } from "./fast-record-check.ts";
import type { SourceLine } from "./split-lines.ts";

/** Why a line went to the dead-letter topic (docs/audit-storage.md, "Kafka": the `reason` header). */
export const DEAD_LETTER_REASONS = ["not-json", "invalid-record", "too-large", "not-utf8"] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** The verdict of a line for the dead-letter topic. */
export type DeadLetter = Extract<ClassifiedLine, { kind: "dead-letter" }>;

export type ClassifiedLine =
  /**
   * A valid audit record: `key` is its tenant (empty when it has none), `partition` the producer's default
   * partitioner's value for the key (murmur2, before the modulo; undefined without a key).
   */
  | { readonly kind: "record"; readonly key: Buffer | undefined; readonly partition: number | undefined }
  /**
   * `redacted`: the line as the dead-letter topic gets it when the record names a field that may hold a secret
   * (`isSensitiveAttribute`), each such value replaced by `REDACTED`, and those fields' paths.
   */
  | {
      readonly kind: "dead-letter";
      readonly reason: DeadLetterReason;
      readonly error: string;
      readonly redacted?: { readonly value: Buffer; readonly fields: readonly string[] };
    }
  /** An empty or all-whitespace line: nothing to ship. */
  | { readonly kind: "blank" };

// `scanRecord` (on the bytes) is the fast path, then `surelyValidRecord` (on the parsed value); on a miss of both,
// `validateRecord` (the one schema's own validator) decides.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const BLANK = /^\s*$/;

// Attribute names and tenants repeat from line to line: their verdicts and key bytes are kept (bounded).
const CACHE_LIMIT = 10_000;
const sensitiveNames = new Map<string, boolean>();
interface TenantKey {
  key: Buffer;
  partition: number;
  /** The verdict for a record of this tenant, made once and shared (no object per line). */
  record: ClassifiedLine;
}
/** The verdict for a record without a tenant. */
const UNKEYED: ClassifiedLine = { kind: "record", key: undefined, partition: undefined };
const TOO_LARGE: ClassifiedLine = { kind: "dead-letter", reason: "too-large", error: "line longer than maxLineBytes" };
const tenantKeys = new Map<string, TenantKey>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

function sensitive(name: string): boolean {
  return sensitiveNames.get(name) ?? remember(sensitiveNames, name, isSensitiveAttribute(name));
}

function keyOf(tenant: string): TenantKey | undefined {
  if (tenant === "") return undefined;
  const cached = tenantKeys.get(tenant);
  if (cached) return cached;
  const key = Buffer.from(tenant);
  const partition = defaultPartitioner({ topic: "", value: key }, key);
  return remember(tenantKeys, tenant, { key, partition, record: { kind: "record", key, partition } });
}

function latin1(b: Uint8Array, start: number, end: number): string {
  return (b as Buffer).toString("latin1", start, end);
}

function sameBytes(b: Uint8Array, start: number, end: number, other: Uint8Array): boolean {
  if (end - start !== other.length) return false;
  for (let k = 0; k < other.length; k += 1) if (b[start + k] !== other[k]) return false;
  return true;
}

// The fast path compares bytes with what it saw before instead of making a string per field: attribute names found
// not sensitive, the tenants' keys (a small table by a hash of the bytes), the last `time`.
const plainNames: Buffer[] = [];
const PLAIN_NAMES_LIMIT = 64;
const tenantSlots = new ByteSlots<TenantKey | undefined>(256);

function plainAttributeName(b: Uint8Array, start: number, end: number): boolean {
  for (const name of plainNames) if (sameBytes(b, start, end, name)) return true;
  if (sensitive(latin1(b, start, end))) return false;
  if (plainNames.length < PLAIN_NAMES_LIMIT) plainNames.push(Buffer.from(b.subarray(start, end)));
  return true;
}

function scannedKey(b: Buffer, start: number, end: number): TenantKey | undefined {
  return end === start ? undefined : tenantSlots.get(b, start, end, keyOf);
}

// Whether `time` has the schema's `date-time` format (RFC 3339 that PostgreSQL can index); records written close
// together share it (ms resolution), so the last well-formed one is kept.
const times = new ScannedTime();

const scanned = newScanResult();
const { time: TIME, tenant_id: TENANT, claimed_tenant_id: CLAIMED } = SCANNED_FIELD;

/** The fast path: a line `scanRecord` accepts and whose time is well-formed, classified without parsing it. */
function scannedRecord(bytes: Buffer): ClassifiedLine | undefined {
  if (!scanRecord(bytes, scanned, plainAttributeName)) return undefined;
  const { start, end } = scanned;
  if (!times.read(bytes, start[TIME] as number, end[TIME] as number)) return undefined;
  const key =
    (end[TENANT] as number) > (start[TENANT] as number)
      ? scannedKey(bytes, start[TENANT] as number, end[TENANT] as number)
      : scannedKey(bytes, start[CLAIMED] as number, end[CLAIMED] as number);
  return key?.record ?? UNKEYED;
}

/** What a value under a name that may hold a secret becomes in a dead letter. */
export const REDACTED = "[redacted]";

type JsonObject = Record<string, unknown>;

/** Nesting at which a dead letter's value is replaced whole (a secret may hide deeper; the stack stays small). */
const REDACT_DEPTH = 32;

/**
 * `value` with the value under every secret-like name replaced, at any depth, in objects and arrays (the paths
 * replaced added to `fields`: `/attributes/password`, `/attributes/ctx/0/token`); itself when there is none.
 */
function redactValue(value: unknown, path: string, fields: string[], depth: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= REDACT_DEPTH) {
    fields.push(`${path}…`);
    return REDACTED;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const clean = redactValue(item, `${path}${index}/`, fields, depth + 1);
      if (clean === item) return;
      copy ??= [...value];
      copy[index] = clean;
    });
    return copy ?? value;
  }
  let copy: JsonObject | undefined;
  for (const name of Object.keys(value)) {
    const item = (value as JsonObject)[name];
    let clean: unknown;
    if (sensitive(name)) {
      clean = REDACTED;
      fields.push(`${path}${name}`);
    } else {
      clean = redactValue(item, `${path}${name}/`, fields, depth + 1);
    }
    if (clean === item) continue;
    copy ??= { ...(value as JsonObject) };
    copy[name] = clean;
  }
  return copy ?? value;
}

/** A JSON object key in raw text: a string (escapes whole) followed by a colon. */
const RAW_KEY = /"((?:[^"\\\n]|\\.)*)"\s*:/g;

/**
 * The secret-like names among the keys written in `text`, the parse aside: `JSON.parse` keeps the last of a repeated
 * key, so `{"attributes":{"password":"s"},"attributes":{}}` parses to a record with no secret while its bytes hold one.
 */
function sensitiveKeysIn(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(RAW_KEY)) {
    let name: string;
    try {
      name = JSON.parse(`"${match[1]}"`) as string;
    } catch {
      continue;
    }
    if (sensitive(name)) names.add(name);
  }
  return [...names];
}

/**
 * The dead letter of a line that parsed but is no valid record (or hides a secret under a repeated key; `written`:
 * the secret-like keys in its text, `sensitiveKeysIn`). The
 * dead-letter topic keeps no secret either: when the line names a field that may hold one, at any depth, it is sent
 * re-serialized from its parse with each such value replaced (a repeated key's hidden value is not in the parse at
 * all); the source file still has the line as written, at the `offset` header.
 */
function invalidRecord(value: unknown, written: readonly string[], error: string): ClassifiedLine {
  const verdict = { kind: "dead-letter", reason: "invalid-record", error } as const;
  const fields: string[] = [];
  const clean = redactValue(value, "/", fields, 0);
  for (const name of written) {
    if (!fields.some((field) => field.endsWith(`/${name}`))) fields.push(`(repeated key) ${name}`);
  }
  if (fields.length === 0) return verdict;
  return { ...verdict, redacted: { value: Buffer.from(JSON.stringify(clean)), fields } };
}

/** The tenant a record is keyed by: the verified `tenant_id`, else `claimed_tenant_id`, else none. */
export function tenantKey(record: AuditRecord): string {
  return record.tenant_id !== "" ? record.tenant_id : record.claimed_tenant_id;
}

/** Decides what happens to one line: shipped as a record, dead-lettered with a reason, or skipped when blank. */
export function classifyLine(line: SourceLine): ClassifiedLine {
  return classifyBytes(line.bytes, line.tooLarge);
}

/**
 * `classifyLine` on a line's bytes (cut to the maximum when `tooLarge`). The verdict of a record is shared between
 * lines of the same tenant: read it, never change it.
 */
export function classifyBytes(bytes: Buffer, tooLarge: boolean): ClassifiedLine {
  if (tooLarge) return TOO_LARGE;
  const fast = scannedRecord(bytes);
  if (fast) return fast;
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    return { kind: "dead-letter", reason: "not-utf8", error: (cause as Error).message };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    if (BLANK.test(text)) return { kind: "blank" };
    return { kind: "dead-letter", reason: "not-json", error: (cause as Error).message };
  }
  // Every key of the parse is in the text, so no secret-like key written means none in the parse either.
  const written = sensitiveKeysIn(text);
  let record: AuditRecord;
  if (written.length === 0 && surelyValidRecord(value)) {
    record = value;
  } else {
    try {
      record = validateRecord(value);
    } catch (cause) {
      return invalidRecord(value, written, (cause as Error).message);
    }
  }
  if (written.length > 0) {
    // Valid as parsed, but a repeated key hid a secret-like field: its bytes must not be shipped.
    return invalidRecord(
      value,
      written,
      `a repeated key hides ${written.join(", ")}, which may hold sensitive plaintext`,
    );
  }
  return keyOf(tenantKey(record))?.record ?? UNKEYED;
}
