import type { AuditRecord } from "@svc/audit-record";

/** The attribute a record whose attributes were cut to fit its line carries: `truncated: "attributes"`. */
export const TRUNCATED_ATTRIBUTE = { name: "truncated", value: "attributes" } as const;

/** Bytes of `value` as JSON (UTF-8). */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

export interface BoundedRecord {
  record: AuditRecord;
  /** Attributes left out to fit. */
  dropped: number;
}

/**
 * `record` cut to a JSON line of at most `maxBytes` bytes (without its newline), for a record whose line is longer:
 * every field but `attributes` is kept as it is; the attributes become `truncated: "attributes"` followed by those of
 * the record that still fit, tried in their order (one that does not fit is left out, a later smaller one may still
 * go in). The same record always gives the same result. A handler's own `truncated` attribute gives way to the marker.
 *
 * The other fields are bounded by the schema to well under `EMITTER_LIMITS.maxRecordBytes.min`, so the result fits
 * whenever `maxBytes` respects that bound (the emitter checks it).
 */
export function boundRecord(record: AuditRecord, maxBytes: number): BoundedRecord {
  const { attributes = {}, ...fields } = record;
  const kept: Record<string, string> = { [TRUNCATED_ATTRIBUTE.name]: TRUNCATED_ATTRIBUTE.value };
  let bytes = jsonBytes({ ...fields, attributes: kept });
  let dropped = 0;
  for (const [name, value] of Object.entries(attributes)) {
    // `,"name":"value"`: what one more member adds to the object, wherever JSON.stringify places it
    const cost = 1 + jsonBytes(name) + 1 + jsonBytes(value);
    if (name === TRUNCATED_ATTRIBUTE.name || bytes + cost > maxBytes) {
      dropped += 1;
      continue;
    }
    kept[name] = value;
    bytes += cost;
  }
  return { record: { ...fields, attributes: kept }, dropped };
}
