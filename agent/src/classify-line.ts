import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type AuditRecord, AuditRecordSchema, isSensitiveAttribute, validateRecord } from "@svc/audit-record";
import type { SourceLine } from "./split-lines.ts";

/** Why a line went to the dead-letter topic (docs/audit-storage.md, "Kafka": the `reason` header). */
export const DEAD_LETTER_REASONS = ["not-json", "invalid-record", "too-large", "not-utf8"] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

export type ClassifiedLine =
  /** A valid audit record: `key` is its tenant (empty when it has none), `timestamp` its `time` in ms. */
  | { kind: "record"; key: Buffer | undefined; timestamp: bigint }
  | { kind: "dead-letter"; reason: DeadLetterReason; error: string }
  /** An empty or all-whitespace line: nothing to ship. */
  | { kind: "blank" };

// The compiled check is the fast path; on a miss, `validateRecord` (the one schema's own validator) says why.
const check = TypeCompiler.Compile(AuditRecordSchema);
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const BLANK = /^\s*$/;

function hasSensitiveAttribute(record: AuditRecord): boolean {
  return record.attributes !== undefined && Object.keys(record.attributes).some(isSensitiveAttribute);
}

/** The tenant a record is keyed by: the verified `tenant_id`, else `claimed_tenant_id`, else none. */
export function tenantKey(record: AuditRecord): string {
  return record.tenant_id !== "" ? record.tenant_id : record.claimed_tenant_id;
}

/** Decides what happens to one line: shipped as a record, dead-lettered with a reason, or skipped when blank. */
export function classifyLine(line: SourceLine): ClassifiedLine {
  if (line.tooLarge) return { kind: "dead-letter", reason: "too-large", error: "line longer than maxLineBytes" };
  let text: string;
  try {
    text = decoder.decode(line.bytes);
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
  let record: AuditRecord;
  if (check.Check(value) && !hasSensitiveAttribute(value)) {
    record = value;
  } else {
    try {
      record = validateRecord(value);
    } catch (cause) {
      return { kind: "dead-letter", reason: "invalid-record", error: (cause as Error).message };
    }
  }
  const key = tenantKey(record);
  return {
    kind: "record",
    key: key === "" ? undefined : Buffer.from(key),
    timestamp: BigInt(Date.parse(record.time)),
  };
}
