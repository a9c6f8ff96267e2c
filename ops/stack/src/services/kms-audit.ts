import { kmsAgentCheckpoint, kmsAuditLog } from "../kms-files.ts";
import { agentDaemon, writerDaemon } from "./audit-pipeline.ts";

/** The KMS audit instance's agent: the KMS's own audit log to its topic, only with `up --kms-audit`. */
export const kmsAuditAgent = agentDaemon({
  name: "kms-audit-agent",
  after: ["kms", "kafka"],
  settings: (ctx) => ({
    source: kmsAuditLog(ctx),
    topic: ctx.config.kms.audit_topic,
    checkpoint: kmsAgentCheckpoint(ctx),
    metricsPort: ctx.config.kms.agent_metrics_port,
  }),
  describe: () => "",
  dropEnv: ["SVC_AGENT_"],
});

/** The KMS audit instance's writer: its topic into `svc-kms-audit` and its own index schema. */
export const kmsAuditConsumer = writerDaemon({
  name: "kms-audit-consumer",
  instance: (ctx) => {
    const { audit_topic, audit_bucket, audit_key_prefix, audit_group_id, audit_index_schema } = ctx.config.kms;
    return {
      topic: audit_topic,
      bucket: audit_bucket,
      keyPrefix: audit_key_prefix,
      groupId: audit_group_id,
      indexSchema: audit_index_schema,
    };
  },
  metricsPort: (ctx) => ctx.config.kms.consumer_metrics_port,
  dropEnv: ["SVC_AUDIT_"],
  exports: (ctx) => ({
    SVC_STACK_KMS_AUDIT_BUCKET: ctx.config.kms.audit_bucket,
    SVC_STACK_KMS_AUDIT_INDEX_SCHEMA: ctx.config.kms.audit_index_schema,
  }),
});
