import { type AuditRecord, AuditRecordSchema, recordTimeMs } from "@svc/audit-record";

/**
 * A hand-written check of `AuditRecordSchema` for the hot path (the compiled TypeBox check costs as much as the
 * JSON parse). It may refuse a valid record (the caller then asks `validateRecord`, which decides and says why)
 * but never accepts an invalid one: every constraint of the schema is checked here, more strictly where cheaper.
 * `test/fast-record-check.test.ts` holds it against the schema.
 */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** [field, minLength, maxLength] of the schema's plain string fields (`time`, a format, is checked apart). */
const STRINGS: readonly (readonly [string, number, number])[] = Object.entries(AuditRecordSchema.properties).flatMap(
  ([field, schema]) =>
    schema.type === "string" && !("format" in schema)
      ? [[field, schema.minLength ?? 0, schema.maxLength ?? Number.POSITIVE_INFINITY] as const]
      : [],
);
const REQUIRED = STRINGS.length + 2; // + time, duration_ms

function stringWithin(value: unknown, min: number, max: number): boolean {
  return typeof value === "string" && value.length >= min && value.length <= max;
}

function attributesValid(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const key in value) {
    if (LINE_BREAK.test(key)) return false;
    const text = (value as Record<string, unknown>)[key];
    if (typeof text !== "string" || text.length > 4096) return false;
  }
  return true;
}

/** True only when `value` is surely a valid record by the schema (sensitive attribute names are not checked). */
export function surelyValidRecord(value: unknown): value is AuditRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  let keys = 0;
  let hasAttributes = false;
  for (const key in record) {
    keys += 1;
    if (key === "attributes") hasAttributes = true;
  }
  if (keys !== REQUIRED + (hasAttributes ? 1 : 0)) return false;
  for (const [field, min, max] of STRINGS) if (!stringWithin(record[field], min, max)) return false;
  const duration = record.duration_ms;
  if (typeof duration !== "number" || !Number.isFinite(duration) || duration < 0) return false;
  const time = record.time;
  if (typeof time !== "string" || recordTimeMs(time) === undefined) return false;
  return !hasAttributes || attributesValid(record.attributes);
}
