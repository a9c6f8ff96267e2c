import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { CoreV1Api } from "@kubernetes/client-node";
import { BACKEND_MAIN } from "@svc/backend";
import { callUnary, ensureModelTables } from "@svc/component-runtime";
import { ReplicaProcess } from "@svc/component-runtime/testing";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { EndpointServiceClient } from "@svc/proto";
import { SHAPER_MAIN } from "@svc/shaper";
import { bucketPrefix, createTestNamespace, leaseName, randomName, stackEnv, type TestNamespace } from "@svc/testkit";
import { SQL } from "bun";
import { ENDPOINT_MAIN } from "../../index.ts";
import { startTestIssuer, type TestIssuer } from "./test-issuer.ts";

const TIMINGS = {
  SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
  SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
};

/** Two backends (k8s-lease), one shaper and endpoints as real processes; auth against the stack's Keycloak. */
export async function endpointHarness(purpose: string) {
  const stack = stackEnv();
  const schema = randomName(`t_${purpose}`).replaceAll("-", "_");
  const sql = new SQL({ url: stack.postgresUrl, max: 2 });
  await ensureModelTables(sql, schema);
  const kubeconfig = loadKubeConfig(stack.kubeconfig);
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  const namespace: TestNamespace = await createTestNamespace(kubeconfig, purpose);
  const issuer: TestIssuer = await startTestIssuer();
  const lock = leaseName("backend");
  const processes: ReplicaProcess[] = [];
  const clients: EndpointServiceClient[] = [];
  // Every replica accepts the realm's tokens and calls the others as its `svc-components` service account.
  const auth = { SVC_AUTH_ISSUER: issuer.issuer, SVC_AUTH_CLIENT_SECRET: issuer.componentsClientSecret };
  const model = { SVC_COMPONENTS_PG_URL: stack.postgresUrl, SVC_COMPONENTS_PG_SCHEMA: schema, ...auth };
  const spawn = (pod: string, main: string, env: Record<string, string>) => {
    const replica = new ReplicaProcess(pod, main, env);
    processes.push(replica);
    return replica;
  };
  const health = (r: ReplicaProcess) => `127.0.0.1:${r.grpcPort}/${r.healthPort}`;

  return {
    schema,
    sql,
    issuer,
    processes,
    async createPods(app: string, ...pods: string[]) {
      for (const name of pods) {
        await core.createNamespacedPod({
          namespace: namespace.name,
          body: { metadata: { name, labels: { app } }, spec: { containers: [{ name: "c", image: "none" }] } },
        });
      }
    },
    startShaper(pod: string): ReplicaProcess {
      return spawn(pod, SHAPER_MAIN, { ...model, SVC_ELECTION_BACKEND: "", SVC_SHAPER_JOB_WORK_MS: "20" });
    },
    startBackend(pod: string, shaper: ReplicaProcess): ReplicaProcess {
      return spawn(pod, BACKEND_MAIN, {
        ...model,
        ...TIMINGS,
        SVC_ELECTION_BACKEND: "k8s-lease",
        SVC_ELECTION_KUBECONFIG: stack.kubeconfig,
        SVC_ELECTION_NAMESPACE: namespace.name,
        SVC_ELECTION_LOCK_NAME: lock,
        SVC_BACKEND_SHAPER_ADDRESSES: shaper.address,
        SVC_BACKEND_TICK_MS: "100",
        SVC_COMPONENTS_S3_ENDPOINT: stack.s3.endpoint,
        SVC_COMPONENTS_S3_REGION: stack.s3.region,
        SVC_COMPONENTS_S3_ACCESS_KEY: stack.s3.accessKeyId,
        SVC_COMPONENTS_S3_SECRET_KEY: stack.s3.secretAccessKey,
        SVC_COMPONENTS_S3_BUCKET: "svc-audit",
        SVC_COMPONENTS_S3_PREFIX: bucketPrefix(purpose),
      });
    },
    startEndpoint(pod: string, backends: ReplicaProcess[], shaper: ReplicaProcess): ReplicaProcess {
      return spawn(pod, ENDPOINT_MAIN, {
        SVC_ENDPOINT_DISCOVERY: "static",
        SVC_ENDPOINT_BACKEND_REPLICAS: backends.map(health).join(","),
        SVC_ENDPOINT_SHAPER_REPLICAS: health(shaper),
        SVC_ENDPOINT_PROBE_MS: "100",
        SVC_ENDPOINT_ADMIN_PORT: "0",
        ...auth,
      });
    },
    /** The endpoint's admin port, from its `started` line. */
    async adminPort(endpoint: ReplicaProcess): Promise<number> {
      return (await endpoint.waitForLine((l) => typeof l.adminPort === "number")).adminPort as number;
    },
    client(endpoint: ReplicaProcess) {
      const client = new EndpointServiceClient(endpoint.address, credentials.createInsecure());
      clients.push(client);
      const md = (token: string | undefined) => {
        const metadata = new Metadata();
        metadata.set("x-tenant-id", "tenant-a");
        if (token) metadata.set("authorization", `Bearer ${token}`);
        return metadata;
      };
      return {
        createIndex: (token: string | undefined, name: string, shardCount: number) =>
          callUnary(client.createIndex.bind(client), { name, shardCount }, md(token), 10_000),
        submitJob: (token: string | undefined, indexName: string, input: string) =>
          callUnary(client.submitJob.bind(client), { indexName, input }, md(token), 3_000),
        getTask: (token: string | undefined, taskId: string) =>
          callUnary(client.getTask.bind(client), { taskId }, md(token), 3_000),
      };
    },
    async remove() {
      for (const client of clients.splice(0)) client.close();
      await Promise.all(processes.splice(0).map((p) => p.stop()));
      await issuer.stop();
      await namespace.remove();
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.close();
    },
  };
}

export const codeOf = (error: unknown) => (error as ServiceError).code;
