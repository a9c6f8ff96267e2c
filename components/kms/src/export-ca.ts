import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Writes the root CA certificate (public) to `path` atomically (temp file + rename), mode 0644. */
export function exportCaCertificate(path: string, certPem: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, certPem, { mode: 0o644 });
  renameSync(temporary, path);
}
