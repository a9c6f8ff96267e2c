import type { SQL } from "bun";
import { RuntimeError } from "./errors.ts";

/** A schema name as the config schemas allow it (it is put into statements, so it is checked here too). */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** `schema.table`, for statements. */
export function tableOf(schema: string, table: string): string {
  if (!IDENTIFIER.test(schema)) throw new RuntimeError("RUNTIME_SCHEMA_FAILED", `bad schema name ${schema}`);
  return `${schema}.${table}`;
}

/** The model of docs/components.md: every table any component reads or writes. */
function modelDdl(schema: string): string[] {
  const t = (name: string) => tableOf(schema, name);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${t("leader_terms")} (
       component text PRIMARY KEY,
       term bigint NOT NULL,
       holder text NOT NULL,
       since timestamptz NOT NULL DEFAULT now(),
       writes bigint NOT NULL DEFAULT 0
     )`,
    `CREATE TABLE IF NOT EXISTS ${t("indexes")} (
       name text PRIMARY KEY,
       shard_count integer NOT NULL CHECK (shard_count > 0),
       state text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'deleting', 'deleted')),
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS ${t("shards")} (
       shard_id text PRIMARY KEY,
       index_name text NOT NULL REFERENCES ${t("indexes")} (name),
       object_key text NOT NULL,
       sha256 text NOT NULL,
       size_bytes bigint NOT NULL,
       assigned_node text,
       assigned_term bigint,
       loaded_node text,
       loaded_at timestamptz
     )`,
    `CREATE INDEX IF NOT EXISTS shards_assigned_node ON ${t("shards")} (assigned_node)`,
    `CREATE TABLE IF NOT EXISTS ${t("compute_nodes")} (
       node_id text PRIMARY KEY,
       address text NOT NULL,
       pod_name text NOT NULL,
       capacity integer NOT NULL DEFAULT 0,
       state text NOT NULL CHECK (state IN ('up', 'lost', 'removed')),
       last_heartbeat timestamptz NOT NULL,
       registered_term bigint NOT NULL,
       changed_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS ${t("task_queue")} (
       id uuid PRIMARY KEY,
       kind text NOT NULL CHECK (kind IN ('append', 'cleanup', 'delete_index', 'shaper_job')),
       index_name text NOT NULL,
       payload jsonb NOT NULL DEFAULT '{}',
       state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
       attempts integer NOT NULL DEFAULT 0,
       claimed_term bigint,
       result text,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX IF NOT EXISTS task_queue_state ON ${t("task_queue")} (state, created_at)`,
    `CREATE TABLE IF NOT EXISTS ${t("index_keys")} (
       index_name text PRIMARY KEY REFERENCES ${t("indexes")} (name),
       key_id text NOT NULL,
       material text NOT NULL
     )`,
    `CREATE TABLE IF NOT EXISTS ${t("job_results")} (
       task_id uuid PRIMARY KEY,
       shaper_pod text NOT NULL,
       result text NOT NULL,
       finished_at timestamptz NOT NULL DEFAULT now()
     )`,
  ];
}

/**
 * Creates the model's schema and tables when missing, under a transaction-scoped advisory lock so replicas starting
 * together do not race on the catalog. Throws `RUNTIME_SCHEMA_FAILED` (retryable: the database may be starting).
 */
export async function ensureModelTables(sql: SQL, schema: string): Promise<void> {
  const statements = modelDdl(schema);
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${`svc-components:${schema}`}))`;
      for (const statement of statements) await tx.unsafe(statement);
    });
  } catch (error) {
    throw new RuntimeError("RUNTIME_SCHEMA_FAILED", `model tables in ${schema}: ${(error as Error).message}`, {
      subject: schema,
      canRetry: true,
      cause: error,
    });
  }
}
