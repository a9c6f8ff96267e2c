import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AuditRecord, parseRecords } from "@svc/audit-record";

/** A fresh directory under the OS temp dir; `remove()` deletes it and everything in it. */
export async function tempDir(purpose: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `svc-audit-emitter-${purpose}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Every record of a JSONL file, validated by @svc/audit-record (an absent file holds none). */
export async function recordsIn(path: string): Promise<AuditRecord[]> {
  const content = await readFile(path, "utf8").catch(() => "");
  return parseRecords(content);
}
