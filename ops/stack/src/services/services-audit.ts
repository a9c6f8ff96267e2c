import { join } from "node:path";
import { auditAgentCheckpoint, endpointAuditLog, ensureAuditPageTokenKey } from "../audit-files.ts";
import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { StackContext, StackService } from "../context.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { agentDaemon, auditS3Env, stackBrokers, writerDaemon } from "./audit-pipeline.ts";
import { REPLICA_SUFFIXES } from "./component-ports.ts";
import { servicesIssuer } from "./components.ts";
import { postgres } from "./postgres.ts";

/**
 * The endpoints' audit pipeline, as the KMS's (kms-audit.ts) with the service audit's settings (`[audit]`): an
 * agent per endpoint replica, the writer and the audit API. Started by `up --services` after the endpoints.
 */

/** The agent of endpoint replica `index`'s health and metrics port. */
export const auditAgentPort = (ctx: StackContext, index: number) =>
  index === 0 ? ctx.config.audit.agent_a_metrics_port : ctx.config.audit.agent_b_metrics_port;

/**
 * The audit API's environment (audit-api/README.md): the writer's index and bucket, the topic's tail (records
 * listed before the writer's batch is stored), tokens of endpoint's realm, the block cache's disk tier in the state
 * directory. `pageTokenKey` is the state directory's (audit-files.ts).
 */
function auditApiEnv(ctx: StackContext, pageTokenKey: string): Record<string, string> {
  const { topic, index_schema, grpc_port, rest_port } = ctx.config.audit;
  return {
    SVC_AUDIT_HOST_PORT: String(grpc_port),
    SVC_AUDIT_GRPC_HOST: "127.0.0.1",
    SVC_AUDIT_REST_PORT: String(rest_port),
    SVC_AUDIT_REST_HOST: "127.0.0.1",
    SVC_AUDIT_PG_URL: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
    SVC_AUDIT_INDEX_SCHEMA: index_schema,
    ...auditS3Env(ctx),
    SVC_AUDIT_API_PAGE_TOKEN_KEY: pageTokenKey,
    SVC_AUDIT_KAFKA_BROKERS: stackBrokers(ctx),
    SVC_AUDIT_TOPIC: topic,
    SVC_AUTH_ISSUER: servicesIssuer(ctx),
    // The block cache's disk tier, as the chart deploys it (its 1 GiB default), kept across restarts of the stack.
    SVC_AUDIT_API_DISK_CACHE_DIR: join(ctx.stateDir, "audit-api", "blocks"),
  };
}

function auditAgent(index: number): StackService {
  const pod = `endpoint-${REPLICA_SUFFIXES[index]}`;
  return agentDaemon({
    name: `audit-agent-${REPLICA_SUFFIXES[index]}`,
    after: ["kafka", pod],
    settings: (ctx) => ({
      source: endpointAuditLog(ctx, pod),
      topic: ctx.config.audit.topic,
      checkpoint: auditAgentCheckpoint(ctx, pod),
      metricsPort: auditAgentPort(ctx, index),
      clientId: `svc-audit-agent-${pod}`,
    }),
    describe: () => `${pod}'s audit → `,
    dropEnv: ["SVC_"],
  });
}

/** The service audit's writer (queue-consumer). */
const auditWriter = writerDaemon({
  name: "audit-writer",
  instance: (ctx) => {
    const { topic, bucket, key_prefix, group_id, index_schema, writer_batch_max_age_ms } = ctx.config.audit;
    return {
      topic,
      bucket,
      keyPrefix: key_prefix,
      groupId: group_id,
      indexSchema: index_schema,
      batchMaxAgeMs: writer_batch_max_age_ms,
    };
  },
  metricsPort: (ctx) => ctx.config.audit.consumer_metrics_port,
  dropEnv: ["SVC_"],
  exports: (ctx) => ({
    SVC_STACK_AUDIT_BUCKET: ctx.config.audit.bucket,
    SVC_STACK_AUDIT_INDEX_SCHEMA: ctx.config.audit.index_schema,
  }),
});

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
