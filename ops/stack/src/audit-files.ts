import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { StackContext } from "./context.ts";
import { ensureSecretFile } from "./secret-file.ts";

/** The `up --services` files in the state directory: the endpoints' audit logs and their pipeline's files. */
export const servicesDir = (ctx: StackContext) => join(ctx.stateDir, "services");
/** endpoint replica `pod`'s audit log (the audit emitter's file sink), one file per replica. */
export const endpointAuditLog = (ctx: StackContext, pod: string) => join(servicesDir(ctx), `${pod}-audit.jsonl`);
/** The checkpoint of the agent that ships `pod`'s audit log. */
export const auditAgentCheckpoint = (ctx: StackContext, pod: string) =>
  join(servicesDir(ctx), `${pod}-audit-agent.checkpoint`);
export const auditPageTokenKeyFile = (ctx: StackContext) => join(servicesDir(ctx), "audit-page-token-key");

/**
 * The audit API's page token key (SVC_AUDIT_API_PAGE_TOKEN_KEY), made once and kept (secret-file.ts), so a page
 * token stays valid across restarts of the API. Returns the key.
 */
export function ensureAuditPageTokenKey(ctx: StackContext): string {
  mkdirSync(servicesDir(ctx), { recursive: true });
  return ensureSecretFile(auditPageTokenKeyFile(ctx));
}
