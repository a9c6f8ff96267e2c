import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { credentials, Metadata } from "@grpc/grpc-js";
import { CoreV1Api } from "@kubernetes/client-node";
import { callUnary, ensureModelTables } from "@svc/component-runtime";
import { componentAuthFixture, ReplicaProcess } from "@svc/component-runtime/testing";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { ORCHESTRATOR_MAIN } from "@svc/orchestrator";
import { ComputeServiceClient } from "@svc/proto";
import {
  bucketPrefix,
  createTestNamespace,
  leaseName,
  randomName,
  stackEnv,
  stackS3Settings,
  type TestNamespace,
} from "@svc/testkit";
import { SQL } from "bun";
import { COMPUTE_MAIN } from "../../index.ts";

const TIMINGS = {
  SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
  SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
};

/**
 * One orchestrator (postgres election) and compute replicas (k8s-lease on the stack's kube-apiserver, or "") as
 * real processes, over a schema of their own on the stack's PostgreSQL and a random prefix of the `svc-audit` bucket,
 * behind service auth in a realm of their own (compute calls the orchestrator as the `svc-components` account).
 */
export async function computeHarness(purpose: string) {
  const stack = stackEnv();
  const auth = await componentAuthFixture(purpose);
  const schema = randomName(`t_${purpose}`).replaceAll("-", "_");
  const bucket = "svc-audit";
  const prefix = bucketPrefix(purpose);
  const sql = new SQL({ url: stack.postgresUrl, max: 2 });
  await ensureModelTables(sql, schema);
  const s3 = new S3Client(stackS3Settings(stack.s3));
  const kubeconfig = loadKubeConfig(stack.kubeconfig);
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  let namespace: TestNamespace | undefined;
  const lock = leaseName("compute");
  const processes: ReplicaProcess[] = [];
  const clients: ComputeServiceClient[] = [];
  const modelEnv = {
    SVC_COMPONENTS_PG_URL: stack.postgresUrl,
    SVC_COMPONENTS_PG_SCHEMA: schema,
    SVC_LOG_LEVEL: "info",
    ...auth.env,
  };
  let orchestratorAddress = "";

  return {
    schema,
    processes,
    async startOrchestrator(nodeTimeoutMs = 1500): Promise<ReplicaProcess> {
      const orchestrator = new ReplicaProcess("orch-a", ORCHESTRATOR_MAIN, {
        ...modelEnv,
        ...TIMINGS,
        SVC_ELECTION_BACKEND: "postgres",
        SVC_ELECTION_PG_URL: stack.postgresUrl,
        SVC_ELECTION_PG_TABLE: `${schema}_lease`,
        SVC_ORCHESTRATOR_TICK_MS: "200",
        SVC_ORCHESTRATOR_NODE_TIMEOUT_MS: String(nodeTimeoutMs),
      });
      processes.push(orchestrator);
      await orchestrator.ready();
      orchestratorAddress = orchestrator.address;
      return orchestrator;
    },
    /** A namespace with Pods `pods` (for the leader label). */
    async createPods(...pods: string[]): Promise<string> {
      namespace ??= await createTestNamespace(kubeconfig, "compute");
      for (const name of pods) {
        await core.createNamespacedPod({
          namespace: namespace.name,
          body: {
            metadata: { name, labels: { app: "compute" } },
            spec: { containers: [{ name: "c", image: "none" }] },
          },
        });
      }
      return namespace.name;
    },
    async labelled(): Promise<string[]> {
      if (!namespace) return [];
      const pods = await core.listNamespacedPod({
        namespace: namespace.name,
        labelSelector: "svc.ai/compute-leader=true",
      });
      return pods.items.map((p) => p.metadata?.name ?? "");
    },
    /** A compute replica; `env` overrides its settings (another S3 endpoint, timeouts). */
    startCompute(pod: string, backend: "k8s-lease" | "", env: Record<string, string> = {}): ReplicaProcess {
      const replica = new ReplicaProcess(pod, COMPUTE_MAIN, {
        ...modelEnv,
        ...TIMINGS,
        SVC_ELECTION_BACKEND: backend,
        SVC_ELECTION_KUBECONFIG: stack.kubeconfig,
        SVC_ELECTION_NAMESPACE: namespace?.name ?? "default",
        SVC_ELECTION_LOCK_NAME: lock,
        SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: orchestratorAddress,
        SVC_COMPUTE_HEARTBEAT_MS: "200",
        SVC_COMPONENTS_S3_ENDPOINT: stack.s3.endpoint,
        SVC_COMPONENTS_S3_REGION: stack.s3.region,
        SVC_COMPONENTS_S3_ACCESS_KEY: stack.s3.accessKeyId,
        SVC_COMPONENTS_S3_SECRET_KEY: stack.s3.secretAccessKey,
        SVC_COMPONENTS_S3_BUCKET: bucket,
        ...env,
      });
      processes.push(replica);
      return replica;
    },
    /** An index whose shards are small objects; `corrupt` shard numbers get a record that does not match. */
    async seedIndex(name: string, shards: number, corrupt: number[] = []): Promise<string[]> {
      await sql.unsafe(`INSERT INTO ${schema}.indexes (name, shard_count) VALUES ($1, $2)`, [name, shards]);
      const ids: string[] = [];
      for (let n = 0; n < shards; n++) {
        const id = `${name}/${n}`;
        const key = `${prefix}indexes/${name}/shards/${n}`;
        const body = new TextEncoder().encode(`shard ${id} ${randomName("data")}`);
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ChecksumAlgorithm: "SHA256" }));
        const sha256 = corrupt.includes(n) ? "f".repeat(64) : new Bun.CryptoHasher("sha256").update(body).digest("hex");
        await sql.unsafe(
          `INSERT INTO ${schema}.shards (shard_id, index_name, object_key, sha256, size_bytes) VALUES ($1, $2, $3, $4, $5)`,
          [id, name, key, sha256, body.length],
        );
        ids.push(id);
      }
      return ids;
    },
    /** shard id → node that reported it loaded. */
    async loaded(): Promise<Record<string, string | null>> {
      const rows: { shard_id: string; loaded_node: string | null }[] = await sql.unsafe(
        `SELECT shard_id, loaded_node FROM ${schema}.shards ORDER BY shard_id`,
      );
      return Object.fromEntries(rows.map((r) => [r.shard_id, r.loaded_node]));
    },
    /** The node's state in `compute_nodes` (up, lost, removed), undefined when it never registered. */
    async nodeState(nodeId: string): Promise<string | undefined> {
      const rows: { state: string }[] = await sql.unsafe(
        `SELECT state FROM ${schema}.compute_nodes WHERE node_id = $1`,
        [nodeId],
      );
      return rows[0]?.state;
    },
    listShards(replica: ReplicaProcess) {
      const client = new ComputeServiceClient(replica.address, credentials.createInsecure(), auth.clientOptions);
      clients.push(client);
      return callUnary(client.listShards.bind(client), {}, new Metadata(), 2000);
    },
    async remove() {
      for (const client of clients.splice(0)) client.close();
      await Promise.all(processes.splice(0).map((p) => p.stop()));
      await namespace?.remove();
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.unsafe(`DROP TABLE IF EXISTS ${schema}_lease`);
      await sql.close();
      s3.destroy();
      await auth.remove();
    },
  };
}
