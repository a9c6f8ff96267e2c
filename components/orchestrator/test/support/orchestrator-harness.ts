import { join } from "node:path";
import { type ClientOptions, credentials, Metadata } from "@grpc/grpc-js";
import { callUnary, ensureModelTables } from "@svc/component-runtime";
import { type ComponentAuthFixture, ReplicaProcess } from "@svc/component-runtime/testing";
import { OrchestratorServiceClient } from "@svc/proto";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";

export const ORCHESTRATOR_MAIN = join(import.meta.dir, "../../src/main.ts");

/** Short timings with the spec's rules, so failovers in tests stay fast. */
export const TEST_TIMINGS = {
  SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
  SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
};

/**
 * Orchestrator replicas on the stack's PostgreSQL (postgres election), in a schema and lease table of their own,
 * behind service auth in `auth`'s realm; the harness's clients call as the `svc-components` service account.
 */
export function orchestratorHarness(purpose: string, auth: ComponentAuthFixture) {
  const url = stackEnv().postgresUrl;
  const schema = randomName(`t_${purpose}`).replaceAll("-", "_");
  const leaseTable = `${schema}_lease`;
  const sql = new SQL({ url, max: 2 });
  const replicas: ReplicaProcess[] = [];
  const clients: OrchestratorServiceClient[] = [];
  return {
    schema,
    sql,
    replicas,
    env(extra: Record<string, string> = {}): Record<string, string> {
      return {
        SVC_ELECTION_BACKEND: "postgres",
        SVC_ELECTION_PG_URL: url,
        SVC_ELECTION_PG_TABLE: leaseTable,
        SVC_COMPONENTS_PG_URL: url,
        SVC_COMPONENTS_PG_SCHEMA: schema,
        SVC_ORCHESTRATOR_TICK_MS: "200",
        SVC_ORCHESTRATOR_NODE_TIMEOUT_MS: "1500",
        SVC_LOG_LEVEL: "debug",
        ...auth.env,
        ...TEST_TIMINGS,
        ...extra,
      };
    },
    start(pod: string, extra: Record<string, string> = {}): ReplicaProcess {
      const replica = new ReplicaProcess(pod, ORCHESTRATOR_MAIN, this.env(extra));
      replicas.push(replica);
      return replica;
    },
    /**
     * A client of `replica`: as the service account by default; with `as` (options without the token interceptor
     * and a bearer token, or none) to show what the replica refuses.
     */
    client(replica: ReplicaProcess, as?: { options: ClientOptions; token?: string; tenantId: string }) {
      const client = new OrchestratorServiceClient(
        replica.address,
        credentials.createInsecure(),
        as ? as.options : auth.clientOptions,
      );
      clients.push(client);
      const md = () => {
        const metadata = new Metadata();
        if (as?.token) metadata.set("authorization", `Bearer ${as.token}`);
        if (as) metadata.set("x-tenant-id", as.tenantId);
        return metadata;
      };
      return {
        addCompute: (nodeId: string, capacityShards = 0) =>
          callUnary(
            client.addCompute.bind(client),
            { nodeId, address: `${nodeId}:1`, podName: nodeId, capacityShards },
            md(),
            2000,
          ),
        heartbeat: (nodeId: string, loadedShards: string[] = []) =>
          callUnary(client.heartbeat.bind(client), { nodeId, loadedShards }, md(), 2000),
        removeCompute: (nodeId: string) =>
          callUnary(client.removeCompute.bind(client), { nodeId, reason: "test" }, md(), 2000),
      };
    },
    /** An index of `shards` shards (rows only; these tests load nothing). */
    async seedIndex(name: string, shards: number): Promise<string[]> {
      await ensureModelTables(sql, schema);
      await sql.unsafe(`INSERT INTO ${schema}.indexes (name, shard_count) VALUES ($1, $2)`, [name, shards]);
      const ids: string[] = [];
      for (let n = 0; n < shards; n++) {
        const id = `${name}/${n}`;
        ids.push(id);
        await sql.unsafe(
          `INSERT INTO ${schema}.shards (shard_id, index_name, object_key, sha256, size_bytes) VALUES ($1, $2, $3, $4, 1)`,
          [id, name, `x/${id}`, "0".repeat(64)],
        );
      }
      return ids;
    },
    async placement(): Promise<Record<string, string | null>> {
      const rows: { shard_id: string; assigned_node: string | null }[] = await sql.unsafe(
        `SELECT shard_id, assigned_node FROM ${schema}.shards ORDER BY shard_id`,
      );
      return Object.fromEntries(rows.map((r) => [r.shard_id, r.assigned_node]));
    },
    async nodeStates(): Promise<Record<string, string>> {
      const rows: { node_id: string; state: string }[] = await sql.unsafe(
        `SELECT node_id, state FROM ${schema}.compute_nodes ORDER BY node_id`,
      );
      return Object.fromEntries(rows.map((r) => [r.node_id, r.state]));
    },
    async fenceTerm(): Promise<number | undefined> {
      const rows: { term: string }[] = await sql.unsafe(
        `SELECT term FROM ${schema}.leader_terms WHERE component = 'orchestrator'`,
      );
      return rows[0] ? Number(rows[0].term) : undefined;
    },
    async stopAll() {
      for (const client of clients.splice(0)) client.close();
      await Promise.all(replicas.splice(0).map((r) => r.stop()));
    },
    async remove() {
      await this.stopAll();
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.unsafe(`DROP TABLE IF EXISTS ${leaseTable}`);
      await sql.close();
    },
  };
}
