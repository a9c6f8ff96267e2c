import { readFile } from "node:fs/promises";
import { type AuditRecord, parseRecords } from "@svc/audit-record";

/** Every record of a JSONL file, validated by @svc/audit-record (an absent file holds none). */
export async function recordsIn(path: string): Promise<AuditRecord[]> {
  const content = await readFile(path, "utf8").catch(() => "");
  return parseRecords(content);
}
