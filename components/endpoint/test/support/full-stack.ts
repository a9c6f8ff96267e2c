import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { BACKEND_MAIN } from "@svc/backend";
import { waitFor } from "@svc/common";
import {
  type DeployedComponent,
  type DeploymentSettings,
  deploymentEnv,
  ensureModelTables,
  HA_COMPONENTS,
  type HaComponent,
} from "@svc/component-runtime";
import { ReplicaProcess } from "@svc/component-runtime/testing";
import { COMPUTE_MAIN } from "@svc/compute";
import { leaderLabelOf } from "@svc/election";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { ORCHESTRATOR_MAIN } from "@svc/orchestrator";
import { SHAPER_MAIN } from "@svc/shaper";
import { bucketPrefix, createTestNamespace, freePortSync, randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { ENDPOINT_MAIN } from "../../index.ts";
import { startTestIssuer } from "./test-issuer.ts";

export { HA_COMPONENTS, type HaComponent };

const MAINS: Record<DeployedComponent, string> = {
  orchestrator: ORCHESTRATOR_MAIN,
  backend: BACKEND_MAIN,
  compute: COMPUTE_MAIN,
  shaper: SHAPER_MAIN,
  endpoint: ENDPOINT_MAIN,
};

/**
 * The whole deployment in one namespace of the stack's kube-apiserver, every replica a real process with a Pod
 * object: two replicas of each HA component on `k8s-lease` and two endpoints that find leaders by the leader label.
 * Short lease timings (3/2/0.5) keep failovers fast.
 */
export async function fullStack(purpose: string, options: { specTimings?: boolean } = {}) {
  // Tests: 3/2/0.5 leases and fast ticks. The failover bench: every component's spec timings and default periods.
  const fast = !options.specTimings;
  const stack = stackEnv();
  const kubeconfig = loadKubeConfig(stack.kubeconfig);
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  const coordination = makeKubeClient(kubeconfig, CoordinationV1Api);
  const namespace = await createTestNamespace(kubeconfig, purpose);
  const issuer = await startTestIssuer();
  const schema = randomName(`t_${purpose}`).replaceAll("-", "_");
  const sql = new SQL({ url: stack.postgresUrl, max: 2 });
  await ensureModelTables(sql, schema);
  const prefix = bucketPrefix(purpose);
  const live = new Map<string, ReplicaProcess>();
  const all: ReplicaProcess[] = [];
  // Addresses are fixed per pod so a restarted replica is reachable where its peers expect it.
  const ports = new Map<string, { grpc: number; health: number }>();
  // Ports below the kernel's ephemeral range, each handed out once (testkit's freePortSync): no outgoing connection
  // can take one between a replica's stop and its restart, and no two pods draw the same one.
  const portsOf = (pod: string) => {
    let p = ports.get(pod);
    if (!p) {
      p = { grpc: freePortSync(), health: freePortSync() };
      ports.set(pod, p);
    }
    return p;
  };
  const pods = (component: string) => [`${component}-a`, `${component}-b`];
  const addresses = (component: string) => pods(component).map((pod) => `127.0.0.1:${portsOf(pod).grpc}`);

  const settings: DeploymentSettings = {
    namespace: namespace.name,
    kubeconfig: stack.kubeconfig,
    pgUrl: stack.postgresUrl,
    schema,
    s3: {
      endpoint: stack.s3.endpoint,
      region: stack.s3.region,
      accessKey: stack.s3.accessKeyId,
      secretKey: stack.s3.secretAccessKey,
      bucket: "svc-audit",
      prefix,
    },
    authIssuer: issuer.issuer,
    componentsClientSecret: issuer.componentsClientSecret,
    grpcAddresses: { orchestrator: addresses("orchestrator"), shaper: addresses("shaper") },
    timings: fast ? "fast" : "spec",
  };
  const envOf = (component: DeployedComponent): Record<string, string> => ({
    ...deploymentEnv(component, settings),
    ...(component === "shaper" ? { SVC_SHAPER_JOB_WORK_MS: "20" } : {}),
    ...(component === "endpoint" ? { SVC_ENDPOINT_ADMIN_PORT: "0" } : {}),
  });
  const componentOf = (pod: string) => pod.replace(/-[ab]$/, "") as DeployedComponent;

  const harness = {
    namespace: namespace.name,
    issuer,
    sql,
    schema,
    live,
    /** Starts (or restarts) the replica of `pod` on its fixed ports. */
    start(pod: string): ReplicaProcess {
      const component = componentOf(pod);
      const p = portsOf(pod);
      const replica = new ReplicaProcess(pod, MAINS[component], {
        ...envOf(component),
        SVC_GRPC_PORT: String(p.grpc),
        SVC_HEALTH_PORT: String(p.health),
      });
      live.set(pod, replica);
      all.push(replica);
      return replica;
    },
    async up(): Promise<void> {
      for (const component of [...HA_COMPONENTS, "endpoint"]) {
        for (const name of pods(component)) {
          await core.createNamespacedPod({
            namespace: namespace.name,
            body: {
              metadata: { name, labels: { app: component } },
              spec: { containers: [{ name: "c", image: "none" }] },
            },
          });
        }
      }
      const started = [...HA_COMPONENTS, "endpoint"].flatMap((c) => pods(c).map((pod) => harness.start(pod)));
      await Promise.all(started.map((r) => r.ready(30_000)));
    },
    replica(pod: string): ReplicaProcess {
      const replica = live.get(pod);
      if (!replica) throw new Error(`no replica ${pod}`);
      return replica;
    },
    async labelled(component: HaComponent): Promise<string[]> {
      const list = await core.listNamespacedPod({
        namespace: namespace.name,
        labelSelector: `${leaderLabelOf(component)}=true`,
      });
      return list.items.map((p) => p.metadata?.name ?? "").sort();
    },
    async holder(component: HaComponent): Promise<string | undefined> {
      const lease = await coordination.readNamespacedLease({ name: `${component}-leader`, namespace: namespace.name });
      return lease.spec?.holderIdentity ?? undefined;
    },
    /** Waits for the spec's expected state: one labelled Pod per HA service, the Lease holder, both endpoints Ready. */
    async expectedState(timeoutMs = 20_000): Promise<Record<HaComponent, string>> {
      return waitFor(
        "one leader per HA service, labelled, holding the Lease; endpoints ready",
        async () => {
          const leaders: Partial<Record<HaComponent, string>> = {};
          for (const component of HA_COMPONENTS) {
            const labelled = await harness.labelled(component);
            const holder = await harness.holder(component);
            const ready = await Promise.all(pods(component).map((pod) => harness.replica(pod).isLeader()));
            if (labelled.length !== 1 || labelled[0] !== holder || ready.filter(Boolean).length !== 1) return undefined;
            if (pods(component)[ready.indexOf(true)] !== holder) return undefined;
            leaders[component] = holder;
          }
          const endpoints = await Promise.all(pods("endpoint").map((pod) => harness.replica(pod).isLeader()));
          return endpoints.every(Boolean) ? (leaders as Record<HaComponent, string>) : undefined;
        },
        { timeoutMs, intervalMs: 100 },
      );
    },
    pods,
    async remove() {
      await Promise.all(all.map((r) => r.stop()));
      await issuer.stop();
      await namespace.remove();
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.close();
    },
  };
  return harness;
}
