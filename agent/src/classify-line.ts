import { type AuditRecord, isSensitiveAttribute, validateRecord } from "@svc/audit-record";
import { surelyValidRecord } from "./fast-record-check.ts";
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

// `surelyValidRecord` is the fast path; on a miss, `validateRecord` (the one schema's own validator) decides.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const BLANK = /^\s*$/;

// Attribute names and tenants repeat from line to line: their verdicts and key bytes are kept (bounded).
const CACHE_LIMIT = 10_000;
const sensitiveNames = new Map<string, boolean>();
const tenantKeys = new Map<string, Buffer>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

function sensitive(name: string): boolean {
  return sensitiveNames.get(name) ?? remember(sensitiveNames, name, isSensitiveAttribute(name));
}

function hasSensitiveAttribute(record: AuditRecord): boolean {
  if (record.attributes === undefined) return false;
  for (const name in record.attributes) if (sensitive(name)) return true;
  return false;
}

function keyBytes(tenant: string): Buffer | undefined {
  if (tenant === "") return undefined;
  return tenantKeys.get(tenant) ?? remember(tenantKeys, tenant, Buffer.from(tenant));
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
  if (surelyValidRecord(value) && !hasSensitiveAttribute(value)) {
    record = value;
  } else {
    try {
      record = validateRecord(value);
    } catch (cause) {
      return { kind: "dead-letter", reason: "invalid-record", error: (cause as Error).message };
    }
  }
  return {
    kind: "record",
    key: keyBytes(tenantKey(record)),
    timestamp: BigInt(Date.parse(record.time)),
  };
}
