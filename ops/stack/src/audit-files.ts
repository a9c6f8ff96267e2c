import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackContext } from "./context.ts";

/** The endpoints' audit pipeline's files in the state directory, beside the endpoints' audit logs. */
export const servicesDir = (ctx: StackContext) => join(ctx.stateDir, "services");
/** The checkpoint of the agent that ships `pod`'s audit log. */
export const auditAgentCheckpoint = (ctx: StackContext, pod: string) =>
  join(servicesDir(ctx), `${pod}-audit-agent.checkpoint`);
export const auditPageTokenKeyFile = (ctx: StackContext) => join(servicesDir(ctx), "audit-page-token-key");

/**
 * The audit API's page token key (SVC_AUDIT_API_PAGE_TOKEN_KEY), made once (32 random bytes, base64url: 43
 * characters; mode 0600) and kept, so a page token stays valid across restarts of the API. Returns the key.
 */
export function ensureAuditPageTokenKey(ctx: StackContext): string {
  mkdirSync(servicesDir(ctx), { recursive: true });
  const file = auditPageTokenKeyFile(ctx);
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  chmodSync(file, 0o600);
  return readFileSync(file, "utf8").trim();
}
