import { credentials, Metadata } from "@grpc/grpc-js";
import { CoreV1Api } from "@kubernetes/client-node";
import { callUnary, ensureModelTables } from "@svc/component-runtime";
import { componentAuthFixture, ReplicaProcess } from "@svc/component-runtime/testing";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { BackendServiceClient, ShaperServiceClient } from "@svc/proto";
import { SHAPER_MAIN } from "@svc/shaper";
import { bucketPrefix, createTestNamespace, leaseName, randomName, stackEnv, type TestNamespace } from "@svc/testkit";
import { SQL } from "bun";
import { BACKEND_MAIN } from "../../index.ts";

const TIMINGS = {
  SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
  SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
};

/**
 * Backend and shaper replicas as real processes over the stack's PostgreSQL, MinIO and kube-apiserver, behind
 * service auth in a realm of their own (the backend calls the shaper as the `svc-components` account).
 */
export async function backendHarness(purpose: string) {
  const stack = stackEnv();
  const auth = await componentAuthFixture(purpose);
  const schema = randomName(`t_${purpose}`).replaceAll("-", "_");
  const sql = new SQL({ url: stack.postgresUrl, max: 2 });
  await ensureModelTables(sql, schema);
  const kubeconfig = loadKubeConfig(stack.kubeconfig);
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  const namespace: TestNamespace = await createTestNamespace(kubeconfig, purpose);
  const locks = { backend: leaseName("backend"), shaper: leaseName("shaper") };
  const processes: ReplicaProcess[] = [];
  const closers: (() => void)[] = [];
  const shapers: ReplicaProcess[] = [];
  const common = {
    ...TIMINGS,
    SVC_COMPONENTS_PG_URL: stack.postgresUrl,
    SVC_COMPONENTS_PG_SCHEMA: schema,
    SVC_ELECTION_KUBECONFIG: stack.kubeconfig,
    SVC_ELECTION_NAMESPACE: namespace.name,
    ...auth.env,
  };
  const spawn = (pod: string, main: string, env: Record<string, string>) => {
    const replica = new ReplicaProcess(pod, main, { ...common, ...env });
    processes.push(replica);
    return replica;
  };

  return {
    schema,
    sql,
    async createPods(app: string, ...pods: string[]) {
      for (const name of pods) {
        await core.createNamespacedPod({
          namespace: namespace.name,
          body: { metadata: { name, labels: { app } }, spec: { containers: [{ name: "c", image: "none" }] } },
        });
      }
    },
    startShaper(pod: string, backend: "k8s-lease" | "", workMs = 300): ReplicaProcess {
      const shaper = spawn(pod, SHAPER_MAIN, {
        SVC_ELECTION_BACKEND: backend,
        SVC_ELECTION_LOCK_NAME: locks.shaper,
        SVC_SHAPER_JOB_WORK_MS: String(workMs),
      });
      shapers.push(shaper);
      return shaper;
    },
    startBackend(pod: string, backend: "k8s-lease" | "single-node", shaperAddresses: string[]): ReplicaProcess {
      return spawn(pod, BACKEND_MAIN, {
        SVC_ELECTION_BACKEND: backend,
        SVC_ELECTION_LOCK_NAME: locks.backend,
        SVC_BACKEND_SHAPER_ADDRESSES: shaperAddresses.join(","),
        SVC_BACKEND_TICK_MS: "100",
        SVC_BACKEND_JOB_TIMEOUT_MS: "5000",
        SVC_BACKEND_MAX_RUNNING: "3",
        SVC_COMPONENTS_S3_ENDPOINT: stack.s3.endpoint,
        SVC_COMPONENTS_S3_REGION: stack.s3.region,
        SVC_COMPONENTS_S3_ACCESS_KEY: stack.s3.accessKeyId,
        SVC_COMPONENTS_S3_SECRET_KEY: stack.s3.secretAccessKey,
        SVC_COMPONENTS_S3_BUCKET: "svc-audit",
        SVC_COMPONENTS_S3_PREFIX: bucketPrefix(purpose),
      });
    },
    backendClient(replica: ReplicaProcess) {
      const client = new BackendServiceClient(replica.address, credentials.createInsecure(), auth.clientOptions);
      closers.push(() => client.close());
      const md = () => new Metadata();
      return {
        createIndex: (name: string, shardCount: number) =>
          callUnary(client.createIndex.bind(client), { name, shardCount }, md(), 10_000),
        submitJob: (indexName: string, input: string) =>
          callUnary(client.submitJob.bind(client), { indexName, input }, md(), 5_000),
        getTask: (taskId: string) => callUnary(client.getTask.bind(client), { taskId }, md(), 5_000),
        deleteIndex: (name: string) => callUnary(client.deleteIndex.bind(client), { name }, md(), 5_000),
        listIndexes: () => callUnary(client.listIndexes.bind(client), {}, md(), 5_000),
      };
    },
    shaperStatus(replica: ReplicaProcess) {
      const client = new ShaperServiceClient(replica.address, credentials.createInsecure(), auth.clientOptions);
      closers.push(() => client.close());
      return callUnary(client.status.bind(client), {}, new Metadata(), 2_000);
    },
    async taskStates(): Promise<Record<string, string>> {
      const rows: { id: string; state: string }[] = await sql.unsafe(`SELECT id, state FROM ${schema}.task_queue`);
      return Object.fromEntries(rows.map((r) => [r.id, r.state]));
    },
    async doneCount(ids: string[]): Promise<number> {
      const states = await this.taskStates();
      return ids.filter((id) => states[id] === "done").length;
    },
    /** task id → [task result, recorded job results]. */
    async results(ids: string[]): Promise<Map<string, { task: string | null; recorded: string[] }>> {
      const tasks: { id: string; result: string | null }[] = await sql.unsafe(
        `SELECT id::text, result FROM ${schema}.task_queue`,
      );
      const recorded: { task_id: string; result: string }[] = await sql.unsafe(
        `SELECT task_id::text, result FROM ${schema}.job_results`,
      );
      return new Map(
        ids.map((id) => [
          id,
          {
            task: tasks.find((t) => t.id === id)?.result ?? null,
            recorded: recorded.filter((r) => r.task_id === id).map((r) => r.result),
          },
        ]),
      );
    },
    /** How many times each task was run to a fresh record, over every shaper's log. */
    ranCounts(ids: string[]): Record<string, number> {
      const counts = Object.fromEntries(ids.map((id) => [id, 0]));
      for (const shaper of shapers) {
        for (const line of shaper.lines) {
          if (line.event === "job" && line.ran === true && typeof line.task === "string") {
            counts[line.task] = (counts[line.task] ?? 0) + 1;
          }
        }
      }
      return counts;
    },
    async remove() {
      for (const close of closers.splice(0)) close();
      await Promise.all(processes.splice(0).map((p) => p.stop()));
      await namespace.remove();
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.close();
      await auth.remove();
    },
  };
}
