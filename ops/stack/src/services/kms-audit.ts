import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { StackContext, StackService } from "../context.ts";
import { kmsAgentCheckpoint, kmsAuditLog } from "../kms-files.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { kafka } from "./kafka.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";

const healthUrl = (port: number) => `http://127.0.0.1:${port}/health`;
const brokers = (ctx: StackContext) => kafka.exports(ctx).SVC_STACK_KAFKA_BROKERS ?? "";

/** The agent's environment: the KMS's audit log to the KMS topic (agent/README.md). */
export function kmsAgentEnv(ctx: StackContext): Record<string, string> {
  const { audit_topic, agent_metrics_port } = ctx.config.kms;
  return {
    SVC_AGENT_SOURCE: kmsAuditLog(ctx),
    SVC_AGENT_KAFKA_BROKERS: brokers(ctx),
    SVC_AGENT_TOPIC: audit_topic,
    SVC_AGENT_DLQ_TOPIC: `${audit_topic}.dlq`,
    SVC_AGENT_CHECKPOINT_FILE: kmsAgentCheckpoint(ctx),
    SVC_AGENT_METRICS_PORT: String(agent_metrics_port),
    SVC_AGENT_METRICS_HOST: "127.0.0.1",
  };
}

/** The queue-consumer's environment: the KMS topic into the KMS bucket and index schema (queue-consumer/README.md). */
export function kmsConsumerEnv(ctx: StackContext): Record<string, string> {
  const { audit_topic, audit_bucket, audit_key_prefix, audit_group_id, audit_index_schema } = ctx.config.kms;
  const s3 = minio.exports(ctx);
  return {
    SVC_AUDIT_KAFKA_BROKERS: brokers(ctx),
    SVC_AUDIT_TOPIC: audit_topic,
    SVC_AUDIT_GROUP_ID: audit_group_id,
    SVC_AUDIT_CLIENT_ID: audit_group_id,
    SVC_AUDIT_BUCKET: audit_bucket,
    SVC_AUDIT_KEY_PREFIX: audit_key_prefix,
    SVC_AUDIT_S3_ENDPOINT: s3.SVC_STACK_S3_ENDPOINT ?? "",
    SVC_AUDIT_S3_REGION: s3.SVC_STACK_S3_REGION ?? "",
    SVC_AUDIT_S3_ACCESS_KEY: s3.SVC_STACK_S3_ACCESS_KEY ?? "",
    SVC_AUDIT_S3_SECRET_KEY: s3.SVC_STACK_S3_SECRET_KEY ?? "",
    SVC_AUDIT_RETENTION_DAYS: String(ctx.config.minio.retention_days),
    SVC_AUDIT_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_AUDIT_INDEX_SCHEMA: audit_index_schema,
    SVC_AUDIT_METRICS_PORT: String(ctx.config.kms.consumer_metrics_port),
    SVC_AUDIT_METRICS_HOST: "127.0.0.1",
  };
}

/** The KMS audit instance's agent (the same program as the service audit's), only with `up --kms-audit`. */
export const kmsAuditAgent: StackService = {
  name: "kms-audit-agent",
  after: ["kms", "kafka"],
  readiness: { timeoutMs: 30_000, intervalMs: 200 },
  ports: (ctx) => [ctx.config.kms.agent_metrics_port],

  async install(_ctx, task) {
    task.done("runs from agent/ (nothing to fetch)");
  },

  async start(ctx, task) {
    task.update(1, "starting");
    const daemon = await startServer(ctx, this, {
      ...bunProgram("agent/src/main.ts"),
      env: kmsAgentEnv(ctx),
      dropEnv: dropPrefixes("SVC_AGENT_"),
    });
    task.done(`${kmsAuditLog(ctx)} → ${ctx.config.kms.audit_topic}`);
    return daemon;
  },

  probe: (ctx) => answers200(healthUrl(ctx.config.kms.agent_metrics_port), PROBE_TIMEOUT_MS),
  address: (ctx) => `${ctx.config.kms.audit_topic} (health ${healthUrl(ctx.config.kms.agent_metrics_port)})`,
  exports: () => ({}),
};

/** The KMS audit instance's queue-consumer (the same program as the service audit's), only with `up --kms-audit`. */
export const kmsAuditConsumer: StackService = {
  name: "kms-audit-consumer",
  after: ["kafka", "minio", "postgres"],
  readiness: { timeoutMs: 60_000, intervalMs: 200 },
  ports: (ctx) => [ctx.config.kms.consumer_metrics_port],

  async install(_ctx, task) {
    task.done("runs from queue-consumer/ (nothing to fetch)");
  },

  async start(ctx, task) {
    task.update(1, "starting (joining the consumer group)");
    const daemon = await startServer(ctx, this, {
      ...bunProgram("queue-consumer/src/main.ts"),
      env: kmsConsumerEnv(ctx),
      dropEnv: dropPrefixes("SVC_AUDIT_"),
    });
    const { audit_topic, audit_bucket, audit_index_schema } = ctx.config.kms;
    task.done(`${audit_topic} → s3://${audit_bucket}, index schema ${audit_index_schema}`);
    return daemon;
  },

  probe: (ctx) => answers200(healthUrl(ctx.config.kms.consumer_metrics_port), PROBE_TIMEOUT_MS),
  address: (ctx) => `s3://${ctx.config.kms.audit_bucket} (health ${healthUrl(ctx.config.kms.consumer_metrics_port)})`,
  exports: (ctx) => ({
    SVC_STACK_KMS_AUDIT_BUCKET: ctx.config.kms.audit_bucket,
    SVC_STACK_KMS_AUDIT_INDEX_SCHEMA: ctx.config.kms.audit_index_schema,
  }),
};
