import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { StackError } from "./errors.ts";

const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Name = Type.String({ minLength: 1 });
/** A JVM heap in MiB (-Xms = -Xmx). */
const HeapMb = Type.Integer({ minimum: 128, maximum: 65536 });
const MiB = 1024 * 1024;
/** The highest offset from `services.base_port` a replica's port takes (see services/component-ports.ts). */
export const SERVICES_PORT_SPAN = 44;
/** Kafka's legal topic names (`Topic.validate`): up to 249 of [a-zA-Z0-9._-], neither "." nor "..". */
const TopicName = Type.String({ pattern: "^(?!\\.{1,2}$)[a-zA-Z0-9._-]{1,249}$" });

export const StackConfigSchema = Type.Object(
  {
    postgres: Type.Object(
      {
        port: Port,
        user: Name,
        password: Name,
        database: Name,
        /** shared_buffers in MiB (PostgreSQL's default 128 is small for the writer's index at load). */
        shared_buffers_mb: Type.Integer({ minimum: 16, maximum: 65536 }),
        /** max_wal_size in MiB: room between checkpoints for a load run's index writes. */
        max_wal_size_mb: Type.Integer({ minimum: 64, maximum: 1048576 }),
      },
      { additionalProperties: false },
    ),
    kafka: Type.Object(
      {
        port: Port,
        controller_port: Port,
        heap_mb: HeapMb,
        topics: Type.Array(TopicName, { uniqueItems: true }),
        topic_partitions: Type.Integer({ minimum: 1, maximum: 1000 }),
        retention_hours: Type.Integer({ minimum: 1 }),
        /** Per partition (Kafka's log.retention.bytes). */
        retention_bytes: Type.Integer({ minimum: MiB }),
        /** log.segment.bytes is a Java int of at least 1 MiB. */
        segment_bytes: Type.Integer({ minimum: MiB, maximum: 2 ** 31 - 1 }),
      },
      { additionalProperties: false },
    ),
    minio: Type.Object(
      {
        port: Port,
        console_port: Port,
        root_user: Type.String({ minLength: 3 }),
        root_password: Type.String({ minLength: 8 }),
        region: Name,
        buckets: Type.Array(Type.String({ pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" }), { minItems: 1 }),
        retention_days: Type.Integer({ minimum: 1 }),
      },
      { additionalProperties: false },
    ),
    keycloak: Type.Object(
      { port: Port, management_port: Port, admin_user: Name, admin_password: Name, heap_mb: HeapMb },
      { additionalProperties: false },
    ),
    etcd: Type.Object({ port: Port, peer_port: Port }, { additionalProperties: false }),
    kube_apiserver: Type.Object({ port: Port }, { additionalProperties: false }),
    /** The KMS and its audit instance: started only by `up --kms` / `--kms-audit`. */
    kms: Type.Object(
      {
        port: Port,
        http_port: Port,
        /** PostgreSQL schema of the key store (the stack's database). */
        schema: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" }),
        /** Keycloak realm whose tokens the KMS accepts. */
        realm: Name,
        audit_topic: TopicName,
        audit_bucket: Type.String({ pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" }),
        audit_key_prefix: Type.String({ pattern: "^([A-Za-z0-9._-]+/)*$" }),
        audit_group_id: TopicName,
        audit_index_schema: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" }),
        /** /health and /metrics of the KMS audit instance's agent and queue-consumer. */
        agent_metrics_port: Port,
        consumer_metrics_port: Port,
      },
      { additionalProperties: false },
    ),
    /** The HA components and endpoints: started only by `up --services`. */
    services: Type.Object(
      {
        /**
         * First of the replicas' ports: each replica takes three from `base_port + 10 * component + 3 * replica`
         * (gRPC, health, endpoint's admin), components in the order of SERVICE_COMPONENTS (endpoint first).
         */
        base_port: Type.Integer({ minimum: 1024, maximum: 65535 - SERVICES_PORT_SPAN }),
        /** kube-apiserver namespace of the replicas' Pods and Leases (created if missing). */
        namespace: Type.String({ pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" }),
        /** PostgreSQL schema of the components' model tables (the stack's database). */
        schema: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" }),
        /** Bucket and key prefix of the shard objects. */
        bucket: Type.String({ pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" }),
        key_prefix: Type.String({ pattern: "^([A-Za-z0-9._-]+/)*$" }),
        /** Keycloak realm whose tokens endpoint accepts. */
        realm: Name,
        /** How long `up` waits for one leader per HA service (a Lease a killed leader left must expire first). */
        settle_timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600 }),
      },
      { additionalProperties: false },
    ),
    /**
     * The service audit pipeline of the endpoints (`up --services`): an agent per endpoint replica, the writer
     * (queue-consumer) and the audit API.
     */
    audit: Type.Object(
      {
        topic: TopicName,
        bucket: Type.String({ pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" }),
        key_prefix: Type.String({ pattern: "^([A-Za-z0-9._-]+/)*$" }),
        group_id: TopicName,
        index_schema: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" }),
        /** The writer's SVC_AUDIT_BATCH_MAX_AGE_MS: how long a record may wait for its batch's object. */
        writer_batch_max_age_ms: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
        /** The audit API's gRPC (the spec's 50052) and REST ports. */
        grpc_port: Port,
        rest_port: Port,
        /** /health and /metrics of endpoint-a's and endpoint-b's agents. */
        agent_a_metrics_port: Port,
        agent_b_metrics_port: Port,
        /** /health and /metrics of the writer. */
        consumer_metrics_port: Port,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type StackConfig = Static<typeof StackConfigSchema>;

export const DEFAULT_CONFIG_PATH = join(import.meta.dir, "..", "..", "stack.toml");

/**
 * Environment overrides: `IDP_BOOTSTRAP_ADMIN_PASSWORD` (the spec's name) for the Keycloak bootstrap admin, and
 * `SVC_STACK_<SECTION>_<KEY>` (upper case) for any scalar field, e.g. `SVC_STACK_KAFKA_PORT=19092`.
 */
function applyEnv(raw: Record<string, unknown>, env: Record<string, string | undefined>): void {
  for (const [section, value] of Object.entries(raw)) {
    if (typeof value !== "object" || value === null) continue;
    const fields = value as Record<string, unknown>;
    for (const [key, current] of Object.entries(fields)) {
      const override = env[`SVC_STACK_${section}_${key}`.toUpperCase()];
      if (override === undefined || Array.isArray(current)) continue;
      fields[key] = typeof current === "number" ? Number(override) : override;
    }
  }
  const keycloak = raw.keycloak as Record<string, unknown> | undefined;
  const adminPassword = env.IDP_BOOTSTRAP_ADMIN_PASSWORD;
  if (keycloak && adminPassword !== undefined) keycloak.admin_password = adminPassword;
}

/** Parses and validates a stack config; a bad value names its field path and the expected shape. */
export function parseStackConfig(raw: unknown, env: Record<string, string | undefined> = {}): StackConfig {
  if (typeof raw !== "object" || raw === null) {
    throw new StackError("STACK_CONFIG_INVALID", "stack config: expected a table at the top level", "/");
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  applyEnv(copy, env);
  const first = Value.Errors(StackConfigSchema, copy).First();
  if (first) {
    const path = first.path === "" ? "/" : first.path;
    throw new StackError(
      "STACK_CONFIG_INVALID",
      `stack config ${path}: ${first.message} (got ${JSON.stringify(first.value)})`,
      path,
    );
  }
  return copy as StackConfig;
}

export function loadStackConfig(
  env: Record<string, string | undefined>,
  path: string = env.SVC_STACK_CONFIG ?? DEFAULT_CONFIG_PATH,
): StackConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new StackError("STACK_CONFIG_INVALID", `stack config: cannot read ${path}`, path, { cause });
  }
  return parseStackConfig(Bun.TOML.parse(text), env);
}
