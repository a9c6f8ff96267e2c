import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";

/**
 * A secret of the stack's own, made once into `file` (32 random bytes, base64url: 43 characters; mode 0600) and
 * kept across restarts; its directory must exist. Returns the secret.
 */
export function ensureSecretFile(file: string): string {
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  chmodSync(file, 0o600);
  return readFileSync(file, "utf8").trim();
}
