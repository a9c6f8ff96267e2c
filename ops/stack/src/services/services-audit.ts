import { auditAgentCheckpoint, ensureAuditPageTokenKey } from "../audit-files.ts";
import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { StackContext, StackService } from "../context.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { REPLICA_SUFFIXES } from "./component-ports.ts";
import { endpointAuditLog, servicesIssuer } from "./components.ts";
import { kafka } from "./kafka.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";

/**
 * The endpoints' audit pipeline, as the KMS's (kms-audit.ts) with the service audit's settings (`[audit]`): an
 * agent per endpoint replica, the writer and the audit API. Started by `up --services` after the endpoints.
 */

const healthUrl = (port: number) => `http://127.0.0.1:${port}/health`;
const brokers = (ctx: StackContext) => kafka.exports(ctx).SVC_STACK_KAFKA_BROKERS ?? "";
const s3Env = (ctx: StackContext) => {
  const s3 = minio.exports(ctx);
  return {
    SVC_AUDIT_S3_ENDPOINT: s3.SVC_STACK_S3_ENDPOINT ?? "",
    SVC_AUDIT_S3_REGION: s3.SVC_STACK_S3_REGION ?? "",
    SVC_AUDIT_S3_ACCESS_KEY: s3.SVC_STACK_S3_ACCESS_KEY ?? "",
    SVC_AUDIT_S3_SECRET_KEY: s3.SVC_STACK_S3_SECRET_KEY ?? "",
  };
};

/** The agent of endpoint replica `index`'s health and metrics port. */
export const auditAgentPort = (ctx: StackContext, index: number) =>
  index === 0 ? ctx.config.audit.agent_a_metrics_port : ctx.config.audit.agent_b_metrics_port;

/** The agent's environment: one endpoint replica's audit log to the service audit topic (agent/README.md). */
export function auditAgentEnv(ctx: StackContext, index: number): Record<string, string> {
  const pod = `endpoint-${REPLICA_SUFFIXES[index]}`;
  const { topic } = ctx.config.audit;
  return {
    SVC_AGENT_SOURCE: endpointAuditLog(ctx, pod),
    SVC_AGENT_KAFKA_BROKERS: brokers(ctx),
    SVC_AGENT_TOPIC: topic,
    SVC_AGENT_DLQ_TOPIC: `${topic}.dlq`,
    SVC_AGENT_CHECKPOINT_FILE: auditAgentCheckpoint(ctx, pod),
    SVC_AGENT_CLIENT_ID: `svc-audit-agent-${pod}`,
    SVC_AGENT_METRICS_PORT: String(auditAgentPort(ctx, index)),
    SVC_AGENT_METRICS_HOST: "127.0.0.1",
  };
}

/** The writer's environment: the service audit topic into its bucket and index schema (queue-consumer/README.md). */
export function auditWriterEnv(ctx: StackContext): Record<string, string> {
  const { topic, bucket, key_prefix, group_id, index_schema, writer_batch_max_age_ms } = ctx.config.audit;
  return {
    SVC_AUDIT_KAFKA_BROKERS: brokers(ctx),
    SVC_AUDIT_TOPIC: topic,
    SVC_AUDIT_GROUP_ID: group_id,
    SVC_AUDIT_CLIENT_ID: group_id,
    SVC_AUDIT_BUCKET: bucket,
    SVC_AUDIT_KEY_PREFIX: key_prefix,
    ...s3Env(ctx),
    SVC_AUDIT_RETENTION_DAYS: String(ctx.config.minio.retention_days),
    SVC_AUDIT_BATCH_MAX_AGE_MS: String(writer_batch_max_age_ms),
    SVC_AUDIT_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_AUDIT_INDEX_SCHEMA: index_schema,
    SVC_AUDIT_METRICS_PORT: String(ctx.config.audit.consumer_metrics_port),
    SVC_AUDIT_METRICS_HOST: "127.0.0.1",
  };
}

/**
 * The audit API's environment (audit-api/README.md): the writer's index and bucket, the topic's tail (records
 * listed before the writer's batch is stored), tokens of endpoint's realm. `pageTokenKey` is the state
 * directory's (audit-files.ts).
 */
export function auditApiEnv(ctx: StackContext, pageTokenKey: string): Record<string, string> {
  const { topic, index_schema, grpc_port, rest_port } = ctx.config.audit;
  return {
    SVC_AUDIT_HOST_PORT: String(grpc_port),
    SVC_AUDIT_GRPC_HOST: "127.0.0.1",
    SVC_AUDIT_REST_PORT: String(rest_port),
    SVC_AUDIT_REST_HOST: "127.0.0.1",
    SVC_AUDIT_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_AUDIT_INDEX_SCHEMA: index_schema,
    ...s3Env(ctx),
    SVC_AUDIT_API_PAGE_TOKEN_KEY: pageTokenKey,
    SVC_AUDIT_KAFKA_BROKERS: brokers(ctx),
    SVC_AUDIT_TOPIC: topic,
    SVC_AUTH_ISSUER: servicesIssuer(ctx),
  };
}

function auditAgent(index: number): StackService {
  const pod = `endpoint-${REPLICA_SUFFIXES[index]}`;
  return {
    name: `audit-agent-${REPLICA_SUFFIXES[index]}`,
    after: ["kafka", pod],
    readiness: { timeoutMs: 30_000, intervalMs: 200 },
    ports: (ctx) => [auditAgentPort(ctx, index)],

    async install(_ctx, task) {
      task.done("runs from agent/ (nothing to fetch)");
    },

    async start(ctx, task) {
      task.update(1, "starting");
      const daemon = await startServer(ctx, this, {
        ...bunProgram("agent/src/main.ts"),
        env: auditAgentEnv(ctx, index),
        dropEnv: dropPrefixes("SVC_"),
      });
      task.done(`${endpointAuditLog(ctx, pod)} → ${ctx.config.audit.topic}`);
      return daemon;
    },

    probe: (ctx) => answers200(healthUrl(auditAgentPort(ctx, index)), PROBE_TIMEOUT_MS),
    address: (ctx) => `${pod}'s audit → ${ctx.config.audit.topic} (health ${healthUrl(auditAgentPort(ctx, index))})`,
    exports: () => ({}),
  };
}

/** The service audit's writer (queue-consumer). */
export const auditWriter: StackService = {
  name: "audit-writer",
  after: ["kafka", "minio", "postgres"],
  readiness: { timeoutMs: 60_000, intervalMs: 200 },
  ports: (ctx) => [ctx.config.audit.consumer_metrics_port],

  async install(_ctx, task) {
    task.done("runs from queue-consumer/ (nothing to fetch)");
  },

  async start(ctx, task) {
    task.update(1, "starting (joining the consumer group)");
    const daemon = await startServer(ctx, this, {
      ...bunProgram("queue-consumer/src/main.ts"),
      env: auditWriterEnv(ctx),
      dropEnv: dropPrefixes("SVC_"),
    });
    const { topic, bucket, index_schema } = ctx.config.audit;
    task.done(`${topic} → s3://${bucket}, index schema ${index_schema}`);
    return daemon;
  },

  probe: (ctx) => answers200(healthUrl(ctx.config.audit.consumer_metrics_port), PROBE_TIMEOUT_MS),
  address: (ctx) =>
    `s3://${ctx.config.audit.bucket}/${ctx.config.audit.key_prefix} (health ${healthUrl(ctx.config.audit.consumer_metrics_port)})`,
  exports: (ctx) => ({
    SVC_STACK_AUDIT_BUCKET: ctx.config.audit.bucket,
    SVC_STACK_AUDIT_INDEX_SCHEMA: ctx.config.audit.index_schema,
  }),
};

/** The audit API over the writer's index and bucket: after the writer, which creates the index schema at start. */
export const auditApi: StackService = {
  name: "audit-api",
  after: ["kafka", "minio", "postgres", "keycloak", "audit-writer"],
  readiness: { timeoutMs: 60_000, intervalMs: 200 },
  ports: (ctx) => [ctx.config.audit.grpc_port, ctx.config.audit.rest_port],

  async install(_ctx, task) {
    task.done("runs from audit-api/ (nothing to fetch)");
  },

  async start(ctx, task) {
    task.update(1, "starting");
    const daemon = await startServer(ctx, this, {
      ...bunProgram("audit-api/src/main.ts"),
      env: auditApiEnv(ctx, ensureAuditPageTokenKey(ctx)),
      dropEnv: dropPrefixes("SVC_"),
    });
    task.done(`127.0.0.1:${ctx.config.audit.grpc_port} (REST :${ctx.config.audit.rest_port})`);
    return daemon;
  },

  probe: (ctx) => answers200(`http://127.0.0.1:${ctx.config.audit.rest_port}/health/ready`, PROBE_TIMEOUT_MS),
  address: (ctx) => `127.0.0.1:${ctx.config.audit.grpc_port} (REST http://127.0.0.1:${ctx.config.audit.rest_port})`,
  exports: (ctx) => ({
    SVC_STACK_AUDIT_ADDRESS: `127.0.0.1:${ctx.config.audit.grpc_port}`,
    SVC_STACK_AUDIT_URL: `http://127.0.0.1:${ctx.config.audit.rest_port}`,
  }),
};

/** What `up --services` starts after the endpoints: their agents, the writer, the audit API. */
export const SERVICES_AUDIT: readonly StackService[] = [
  ...REPLICA_SUFFIXES.map((_, index) => auditAgent(index)),
  auditWriter,
  auditApi,
];

/**
 * What `up --services` prints for the audit API: a call that lists the tenant's events of the last hour (oldest
 * first, the API's default page) with a token of the realm's seeded user `security` (scope `audit:read`).
 */
export function servicesAuditUsage(ctx: StackContext, grpcurl: string): string[] {
  const realm = ctx.config.services.realm === "svc" ? "" : ` --realm ${ctx.config.services.realm}`;
  const range = `{"start_time":"'$(date -u -d '1 hour ago' +%FT%TZ)'","end_time":"'$(date -u -d '1 minute' +%FT%TZ)'"}`;
  return [
    `audit API (the endpoints' calls): gRPC 127.0.0.1:${ctx.config.audit.grpc_port}, REST http://127.0.0.1:${ctx.config.audit.rest_port}; list the last hour's events:`,
    `  ${grpcurl} -plaintext -H "authorization: Bearer $(bun run token issue --user security --scope audit:read${realm})" -H 'x-tenant-id: tenant-local' -d '${range}' 127.0.0.1:${ctx.config.audit.grpc_port} audit.v2.AuditService/list_events`,
  ];
}
