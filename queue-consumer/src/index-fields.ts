/** The fields of one line that the index keeps (docs/audit-storage.md, "Index"). */
export interface IndexFields {
  id: string;
  tenant_id: string;
  time: string;
  /** `time` in epoch milliseconds. */
  timeMs: number;
  principal_id: string;
  action: string;
  result: string;
  resource: string;
}

/** RFC 3339 with an explicit offset: what PostgreSQL's timestamptz reads the same way as `Date.parse`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** PostgreSQL text cannot hold U+0000: such a character is stored as U+FFFD in the index (the object keeps it). */
function text(value: unknown): string {
  if (typeof value !== "string") return "";
  return value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}

/**
 * The index fields of one JSONL line, or undefined when the line is not a record with a string `id` and an RFC 3339
 * `time` (such a line is still stored in the object; the agent dead-letters invalid lines, so this is rare). The
 * tenant is the verified `tenant_id`, else `claimed_tenant_id` (the Kafka key rule).
 */
export function indexFields(line: Buffer): IndexFields | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const id = text(record.id);
  const time = record.time;
  if (id === "" || typeof time !== "string" || !RFC3339.test(time)) return undefined;
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return {
    id,
    tenant_id: text(record.tenant_id) || text(record.claimed_tenant_id),
    time,
    timeMs,
    principal_id: text(record.principal_id),
    action: text(record.action),
    result: text(record.result),
    resource: text(record.resource),
  };
}
