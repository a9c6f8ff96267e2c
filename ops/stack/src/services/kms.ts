import { existsSync, readFileSync } from "node:fs";
import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { StackContext, StackService } from "../context.ts";
import { ensureKmsPassphrase, kmsAuditLog, kmsCaFile } from "../kms-files.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { keycloak } from "./keycloak.ts";
import { postgres } from "./postgres.ts";

const adminUrl = (ctx: StackContext) => `https://127.0.0.1:${ctx.config.kms.http_port}`;
const grpcAddress = (ctx: StackContext) => `127.0.0.1:${ctx.config.kms.port}`;

/** The KMS's environment (components/kms/README.md): every setting from the stack, none from the caller's shell. */
function kmsServerEnv(ctx: StackContext): Record<string, string> {
  const { port, http_port, schema, realm } = ctx.config.kms;
  return {
    SVC_KMS_PORT: String(port),
    SVC_KMS_HOST: "127.0.0.1",
    SVC_KMS_HTTP_PORT: String(http_port),
    SVC_KMS_HTTP_HOST: "127.0.0.1",
    SVC_KMS_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_KMS_PG_SCHEMA: schema,
    SVC_KMS_PASSPHRASE_FILE: ensureKmsPassphrase(ctx),
    SVC_KMS_BOOTSTRAP: "if-empty",
    SVC_KMS_CA_EXPORT_PATH: kmsCaFile(ctx),
    SVC_AUDIT_LOG_FILE: kmsAuditLog(ctx),
    SVC_AUTH_ISSUER: `${keycloak.exports(ctx).SVC_STACK_IDP_URL}/realms/${realm}`,
  };
}

/**
 * The KMS (components/kms), only with `up --kms`: TLS gRPC and the HTTPS admin/health port, its key store in the
 * stack's PostgreSQL, tokens of the stack's Keycloak realm (seeded by `ops/dev up` before the KMS starts). Ready
 * when `/health/ready` answers 200 over TLS with the exported CA (that is: bootstrapped if empty, and unsealed).
 */
export const kms: StackService = {
  name: "kms",
  after: ["postgres", "keycloak"],
  readiness: { timeoutMs: 30_000, intervalMs: 200 },
  ports: (ctx) => [ctx.config.kms.http_port, ctx.config.kms.port],

  async install(_ctx, task) {
    task.done("runs from components/kms (nothing to fetch)");
  },

  async start(ctx, task) {
    task.update(1, "starting (bootstrap if empty, unseal)");
    const daemon = await startServer(ctx, this, {
      ...bunProgram("components/kms/src/main.ts"),
      env: kmsServerEnv(ctx),
      dropEnv: dropPrefixes("SVC_KMS_", "SVC_AUTH_", "SVC_AUDIT_"),
    });
    task.done(`${grpcAddress(ctx)} (TLS; CA ${kmsCaFile(ctx)})`);
    return daemon;
  },

  async probe(ctx) {
    const caFile = kmsCaFile(ctx);
    if (!existsSync(caFile)) return false;
    return answers200(`${adminUrl(ctx)}/health/ready`, PROBE_TIMEOUT_MS, readFileSync(caFile, "utf8"));
  },

  address: (ctx) => `${grpcAddress(ctx)} (TLS gRPC; admin ${adminUrl(ctx)})`,

  exports: (ctx) => ({
    SVC_STACK_KMS_ADDRESS: grpcAddress(ctx),
    SVC_STACK_KMS_CA_CERT: kmsCaFile(ctx),
    SVC_STACK_KMS_ADMIN_URL: adminUrl(ctx),
    SVC_STACK_KMS_AUDIT_LOG: kmsAuditLog(ctx),
  }),
};
