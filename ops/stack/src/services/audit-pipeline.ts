import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { StackContext, StackService } from "../context.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { kafka } from "./kafka.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";

/**
 * The daemons of an audit instance on the stack — the agent (agent/) and the writer (queue-consumer/) — shared by
 * the KMS's instance (`--kms-audit`) and the endpoints' (`--services`): the same programs with other settings.
 */

/**
 * `BUN_JSC_forceRAMSize` of the agent and the writer, as deployed (ops/helm/svc/values.yaml, `agent.jscRamBytes`,
 * `queueConsumer.jscRamBytes`): the RAM JavaScriptCore sizes its collector's heap growth for. Unset, it sizes for the
 * whole machine and garbage grows to several times the live heap (agent/README.md and queue-consumer/README.md,
 * "Memory"). Bun reads it at start, so it is the launcher's to set.
 */
export const AUDIT_DAEMON_JSC_RAM_BYTES = 256 * 2 ** 20;

/** The launch environment that sizes a daemon's heap for `bytes` of RAM. */
export const jscHeapEnv = (bytes: number | string = AUDIT_DAEMON_JSC_RAM_BYTES): Record<string, string> => ({
  BUN_JSC_forceRAMSize: String(bytes),
});

export const healthUrl = (port: number) => `http://127.0.0.1:${port}/health`;
export const stackBrokers = (ctx: StackContext) => kafka.exports(ctx).SVC_STACK_KAFKA_BROKERS ?? "";

/** The stack's MinIO as the audit programs' `SVC_AUDIT_S3_*` settings. */
export function auditS3Env(ctx: StackContext): Record<string, string> {
  const s3 = minio.exports(ctx);
  return {
    SVC_AUDIT_S3_ENDPOINT: s3.SVC_STACK_S3_ENDPOINT ?? "",
    SVC_AUDIT_S3_REGION: s3.SVC_STACK_S3_REGION ?? "",
    SVC_AUDIT_S3_ACCESS_KEY: s3.SVC_STACK_S3_ACCESS_KEY ?? "",
    SVC_AUDIT_S3_SECRET_KEY: s3.SVC_STACK_S3_SECRET_KEY ?? "",
  };
}

/** Where one audit instance's records go: its topic, its bucket and key prefix, its writer's group and index. */
export interface AuditInstance {
  topic: string;
  bucket: string;
  keyPrefix: string;
  groupId: string;
  indexSchema: string;
  /** The writer's batch age (its default when unset). */
  batchMaxAgeMs?: number;
}

/** One agent: `source` to the instance's topic (agent/README.md). */
export interface AgentSettings {
  source: string;
  topic: string;
  checkpoint: string;
  metricsPort: number;
  clientId?: string;
}

function agentEnv(ctx: StackContext, agent: AgentSettings): Record<string, string> {
  return {
    SVC_AGENT_SOURCE: agent.source,
    SVC_AGENT_KAFKA_BROKERS: stackBrokers(ctx),
    SVC_AGENT_TOPIC: agent.topic,
    SVC_AGENT_DLQ_TOPIC: `${agent.topic}.dlq`,
    SVC_AGENT_CHECKPOINT_FILE: agent.checkpoint,
    ...(agent.clientId ? { SVC_AGENT_CLIENT_ID: agent.clientId } : {}),
    SVC_AGENT_METRICS_PORT: String(agent.metricsPort),
    SVC_AGENT_METRICS_HOST: "127.0.0.1",
    ...jscHeapEnv(),
  };
}

/** The writer's environment: the instance's topic into its bucket and index schema (queue-consumer/README.md). */
function writerEnv(ctx: StackContext, instance: AuditInstance, metricsPort: number): Record<string, string> {
  return {
    SVC_AUDIT_KAFKA_BROKERS: stackBrokers(ctx),
    SVC_AUDIT_TOPIC: instance.topic,
    SVC_AUDIT_GROUP_ID: instance.groupId,
    SVC_AUDIT_CLIENT_ID: instance.groupId,
    SVC_AUDIT_BUCKET: instance.bucket,
    SVC_AUDIT_KEY_PREFIX: instance.keyPrefix,
    ...auditS3Env(ctx),
    SVC_AUDIT_RETENTION_DAYS: String(ctx.config.minio.retention_days),
    ...(instance.batchMaxAgeMs === undefined ? {} : { SVC_AUDIT_BATCH_MAX_AGE_MS: String(instance.batchMaxAgeMs) }),
    SVC_AUDIT_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_AUDIT_INDEX_SCHEMA: instance.indexSchema,
    SVC_AUDIT_METRICS_PORT: String(metricsPort),
    SVC_AUDIT_METRICS_HOST: "127.0.0.1",
    ...jscHeapEnv(),
  };
}

/** An agent daemon: ready when its `/health` answers 200. `dropEnv`: the caller's variables it must not inherit. */
export function agentDaemon(spec: {
  name: string;
  after: string[];
  settings: (ctx: StackContext) => AgentSettings;
  /** How `status` names what it reads (the source's owner, e.g. "endpoint-a's audit"). */
  describe: (ctx: StackContext) => string;
  dropEnv: string[];
}): StackService {
  return {
    name: spec.name,
    after: spec.after,
    readiness: { timeoutMs: 30_000, intervalMs: 200 },
    ports: (ctx) => [spec.settings(ctx).metricsPort],

    async install(_ctx, task) {
      task.done("runs from agent/ (nothing to fetch)");
    },

    async start(ctx, task) {
      task.update(1, "starting");
      const settings = spec.settings(ctx);
      const daemon = await startServer(ctx, this, {
        ...bunProgram("agent/src/main.ts"),
        env: agentEnv(ctx, settings),
        dropEnv: dropPrefixes(...spec.dropEnv),
      });
      task.done(`${settings.source} → ${settings.topic}`);
      return daemon;
    },

    probe: (ctx) => answers200(healthUrl(spec.settings(ctx).metricsPort), PROBE_TIMEOUT_MS),
    address: (ctx) => {
      const { topic, metricsPort } = spec.settings(ctx);
      return `${spec.describe(ctx)}${topic} (health ${healthUrl(metricsPort)})`;
    },
    exports: () => ({}),
  };
}

/** A writer daemon (queue-consumer): ready when its `/health` answers 200, that is, once it joined its group. */
export function writerDaemon(spec: {
  name: string;
  instance: (ctx: StackContext) => AuditInstance;
  metricsPort: (ctx: StackContext) => number;
  dropEnv: string[];
  exports: (ctx: StackContext) => Record<string, string>;
}): StackService {
  return {
    name: spec.name,
    after: ["kafka", "minio", "postgres"],
    readiness: { timeoutMs: 60_000, intervalMs: 200 },
    ports: (ctx) => [spec.metricsPort(ctx)],

    async install(_ctx, task) {
      task.done("runs from queue-consumer/ (nothing to fetch)");
    },

    async start(ctx, task) {
      task.update(1, "starting (joining the consumer group)");
      const instance = spec.instance(ctx);
      const daemon = await startServer(ctx, this, {
        ...bunProgram("queue-consumer/src/main.ts"),
        env: writerEnv(ctx, instance, spec.metricsPort(ctx)),
        dropEnv: dropPrefixes(...spec.dropEnv),
      });
      task.done(`${instance.topic} → s3://${instance.bucket}, index schema ${instance.indexSchema}`);
      return daemon;
    },

    probe: (ctx) => answers200(healthUrl(spec.metricsPort(ctx)), PROBE_TIMEOUT_MS),
    address: (ctx) => {
      const { bucket, keyPrefix } = spec.instance(ctx);
      return `s3://${bucket}/${keyPrefix} (health ${healthUrl(spec.metricsPort(ctx))})`;
    },
    exports: spec.exports,
  };
}
