import type { AuditRecord } from "@svc/audit-record";

/** The workload of every bench row: ≈400-byte audit records over a few tenants (bench/README.md, "Workload"). */
export const RECORD_BYTES = 400;
export const TENANTS = ["tenant-a", "tenant-b", "tenant-c", "tenant-d", "tenant-e", "tenant-f", "tenant-g", "tenant-h"];

/** Principals per tenant (`user-<seq mod 31>@<tenant>`), unless a caller asks for more. */
export const WORKLOAD_PRINCIPALS = 31;

const ACTIONS = [
  "/kms.v1.KeyService/Encrypt",
  "/kms.v1.KeyService/Decrypt",
  "/audit.v2.AuditService/list_events",
  "/endpoint.v1.EndpointService/Invoke",
];
const RESULTS = ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "PERMISSION_DENIED"];

/** `,"note":""`: what the padding attribute costs before its first byte. */
const NOTE_OVERHEAD = 10;

/**
 * Record number `seq` of a run: a unique, time-sortable id (`<run>-<time ms, 13 digits>-<seq, 10 digits>`: the
 * id sorts by time, then by sequence), the tenant and principal cycling over `TENANTS`, and a `note` attribute
 * that pads the JSON line (without its newline) to exactly `bytes` when the rest leaves room for it; `principals`
 * per tenant (`user-<seq mod principals>@<tenant>`).
 */
export function makeRecord(
  run: string,
  seq: number,
  timeMs: number,
  bytes = RECORD_BYTES,
  principals = WORKLOAD_PRINCIPALS,
): AuditRecord {
  const tenant = TENANTS[seq % TENANTS.length] ?? "tenant-a";
  const record: AuditRecord = {
    id: `${run}-${String(timeMs).padStart(13, "0")}-${String(seq).padStart(10, "0")}`,
    time: new Date(timeMs).toISOString(),
    source: "endpoint",
    action: ACTIONS[seq % ACTIONS.length] ?? "",
    resource: `tenants/${tenant}/keys/key-${String(seq % 997).padStart(4, "0")}`,
    result: RESULTS[seq % RESULTS.length] ?? "ok",
    duration_ms: (seq % 250) / 10,
    claimed_tenant_id: tenant,
    principal_id: `user-${seq % principals}@${tenant}`,
    tenant_id: tenant,
    attributes: { request_id: `req-${seq}`, client_ip: `10.0.${seq % 256}.${(seq >> 8) % 256}` },
  };
  const short = bytes - JSON.stringify(record).length - NOTE_OVERHEAD;
  if (short >= 0 && record.attributes) record.attributes.note = "x".repeat(short);
  return record;
}

/** One JSONL line (newline-terminated) of `makeRecord`. Not re-validated here: the tests validate the generator. */
export function recordLine(...record: Parameters<typeof makeRecord>): string {
  return `${JSON.stringify(makeRecord(...record))}\n`;
}

/** `count` lines from `firstSeq`, all stamped `timeMs`, as one string (one write). */
export function recordLines(run: string, firstSeq: number, count: number, timeMs: number): string {
  const lines: string[] = new Array(count);
  for (let i = 0; i < count; i++) lines[i] = recordLine(run, firstSeq + i, timeMs);
  return lines.join("");
}

/** The id of record `seq` is recoverable from its line without parsing the JSON (the ledger reads millions). */
export function idOfLine(line: string): string | undefined {
  const match = /^\{"id":"([^"]+)"/.exec(line);
  return match?.[1];
}
