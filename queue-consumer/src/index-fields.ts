import { newScanResult, recordTimeMs, SCANNED_FIELD, ScannedTime, scanRecord } from "@svc/audit-record";
import { ByteSlots } from "@svc/common";

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

const { id: ID, time: TIME, tenant_id: TENANT, claimed_tenant_id: CLAIMED } = SCANNED_FIELD;
const { principal_id: PRINCIPAL, action: ACTION, result: RESULT, resource: RESOURCE } = SCANNED_FIELD;
const scanned = newScanResult();
/** The last well-formed `time` (records of one millisecond share it): its text and milliseconds made once. */
const times = new ScannedTime();
const anyName = () => true;
/**
 * Tenants, principals, actions and results repeat record after record: one string per distinct value, whose hash is
 * computed once, so the rollups' maps (`rollup-counts.ts`) do not hash a fresh string per event.
 */
const repeated = new ByteSlots<string>(4096);
const asIs = (text: string) => text;

/**
 * A string field as the index stores it. PostgreSQL text cannot hold U+0000: such a character is stored as U+FFFD
 * (the object keeps it). A lone surrogate (`"\ud800"` in the JSON) has no UTF-8: it is U+FFFD too, here, as the
 * UTF-8 sent to PostgreSQL would make it, so that the string the writer keys a tenant by (`tenantKeys`) is the one
 * the index answers with.
 */
function text(value: unknown): string {
  if (typeof value !== "string") return "";
  const whole = value.toWellFormed();
  return whole.includes("\u0000") ? whole.replaceAll("\u0000", "\uFFFD") : whole;
}

/**
 * The index fields of one JSONL line, or undefined when the line is not a record with a string `id` and an RFC 3339
 * `time` (such a line is still stored in the object; the agent dead-letters invalid lines, so this is rare). The
 * tenant is the verified `tenant_id`, else `claimed_tenant_id` (the Kafka key rule).
 *
 * A line the agent's record scan accepts (`scanRecord`: plain ASCII strings, the schema's fields) is read from its
 * bytes, without `JSON.parse` (a third of the cost, queue-consumer/README.md, "Throughput"); any other line is
 * parsed.
 */
export function indexFields(line: Buffer): IndexFields | undefined {
  return lineFields(line, 0, line.length);
}

/** A line's index fields and where it is: bytes `byte_start` to `byte_start + byte_length` of its batch's body. */
export interface LineFields extends IndexFields {
  byte_start: number;
  byte_length: number;
}

/**
 * `indexFields` of the line at bytes `start` to `end` of `body` (a batch's JSONL), with that range: one object per
 * line and no view of it. The writer encodes a batch's rows from `scanIndexLine` instead (no object per line); it
 * reads a chunk's lines this way only when the chunk goes in as duplicates do (`batchEvents`).
 */
export function lineFields(body: Buffer, start: number, end: number): LineFields | undefined {
  const line = scanIndexLine(body, start, end);
  if (line === undefined) return parsedLineFields(body, start, end);
  return {
    id: body.toString("latin1", line.idStart, line.idEnd),
    tenant_id: line.tenant_id,
    time: line.time,
    timeMs: line.timeMs,
    principal_id: line.principal_id,
    action: line.action,
    result: line.result,
    resource: body.toString("latin1", line.resourceStart, line.resourceEnd),
    byte_start: start,
    byte_length: end - start,
  };
}

/**
 * The index fields of a line the record scan accepts, the two that are unique per event (`id`, `resource`) as
 * where they are in the line's buffer (printable ASCII: their bytes are their text), the others as strings.
 */
export interface ScannedIndexLine extends Omit<IndexFields, "id" | "resource"> {
  idStart: number;
  idEnd: number;
  resourceStart: number;
  resourceEnd: number;
}

const scannedLine: ScannedIndexLine = {
  idStart: 0,
  idEnd: 0,
  resourceStart: 0,
  resourceEnd: 0,
  tenant_id: "",
  time: "",
  timeMs: 0,
  principal_id: "",
  action: "",
  result: "",
};

/**
 * The index fields of the line at bytes `lineStart` to `lineEnd` of `body` when the record scan accepts it (plain
 * ASCII strings, the schema's fields) and its `time` is RFC 3339, else undefined (the line may still be a record:
 * `parsedLineFields` decides). Read from the line's bytes, without `JSON.parse` (a third of the cost,
 * queue-consumer/README.md, "Throughput"), and with no object or string made per line (its `time` only when it differs
 * from the line before: `ScannedTime`): the answer is one object, overwritten by the next call.
 */
export function scanIndexLine(body: Buffer, lineStart: number, lineEnd: number): ScannedIndexLine | undefined {
  if (!scanRecord(body, scanned, anyName, lineStart, lineEnd)) return undefined;
  const { start, end } = scanned;
  if (!times.read(body, start[TIME] as number, end[TIME] as number)) return undefined;
  const line = scannedLine;
  line.idStart = start[ID] as number;
  line.idEnd = end[ID] as number;
  line.resourceStart = start[RESOURCE] as number;
  line.resourceEnd = end[RESOURCE] as number;
  line.tenant_id = commonField(body, TENANT) || commonField(body, CLAIMED);
  line.time = times.time;
  line.timeMs = times.timeMs;
  line.principal_id = commonField(body, PRINCIPAL);
  line.action = commonField(body, ACTION);
  line.result = commonField(body, RESULT);
  return line;
}

/** A field whose values repeat (tenant, principal, action, result) of the line just scanned: one string per value. */
function commonField(body: Buffer, field: number): string {
  return repeated.get(body, scanned.start[field] as number, scanned.end[field] as number, asIs);
}

/**
 * The index fields of the line at bytes `lineStart` to `lineEnd` of `body` by `JSON.parse`, or undefined when it is
 * not a record with a string `id` and an RFC 3339 `time` (for lines `scanIndexLine` does not take).
 */
export function parsedLineFields(body: Buffer, lineStart: number, lineEnd: number): LineFields | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8", lineStart, lineEnd));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const id = text(record.id);
  const time = record.time;
  if (id === "" || typeof time !== "string") return undefined;
  const timeMs = recordTimeMs(time);
  if (timeMs === undefined) return undefined;
  return {
    id,
    tenant_id: text(record.tenant_id) || text(record.claimed_tenant_id),
    time,
    timeMs,
    principal_id: text(record.principal_id),
    action: text(record.action),
    result: text(record.result),
    resource: text(record.resource),
    byte_start: lineStart,
    byte_length: lineEnd - lineStart,
  };
}
