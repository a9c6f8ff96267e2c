import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { StackContext } from "./context.ts";
import { ensureSecretFile } from "./secret-file.ts";

/** The KMS's files in the state directory: its secret, exported root CA, audit log and the agent's checkpoint. */
const kmsDir = (ctx: StackContext) => join(ctx.stateDir, "kms");
const kmsPassphraseFile = (ctx: StackContext) => join(kmsDir(ctx), "passphrase");
export const kmsCaFile = (ctx: StackContext) => join(kmsDir(ctx), "kms-root-ca.pem");
export const kmsAuditLog = (ctx: StackContext) => join(kmsDir(ctx), "audit.jsonl");
export const kmsAgentCheckpoint = (ctx: StackContext) => join(kmsDir(ctx), "agent.checkpoint");

/**
 * The KMS's passphrase file, made once and kept (secret-file.ts): the master key in the key store is wrapped under
 * it, so a new one would not unseal that store. Returns its path.
 */
export function ensureKmsPassphrase(ctx: StackContext): string {
  mkdirSync(kmsDir(ctx), { recursive: true, mode: 0o700 });
  const file = kmsPassphraseFile(ctx);
  ensureSecretFile(file);
  return file;
}
