import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { createTestNamespace } from "@svc/testkit";
import { DemoReplica } from "./demo-replica.ts";

/** Short timings with the spec's rules (renew < lease, renew > 1.2 retry): failover runs stay fast. */
export const TEST_TIMINGS = {
  SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
  SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
};

/** Demo replicas of `component` on a kube-apiserver, in a namespace of their own. */
export async function k8sHarness(kubeconfigPath: string, purpose: string, component = "compute") {
  const kubeconfig = loadKubeConfig(kubeconfigPath);
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  const coordination = makeKubeClient(kubeconfig, CoordinationV1Api);
  const testNamespace = await createTestNamespace(kubeconfig, purpose);
  const namespace = testNamespace.name;
  const label = `svc.ai/${component}-leader`;
  const replicas: DemoReplica[] = [];
  return {
    namespace,
    label,
    replicas,
    start(pod: string, lockName: string, extra: Record<string, string> = {}, command?: string[]): DemoReplica {
      const replica = new DemoReplica(
        pod,
        {
          SVC_ELECTION_COMPONENT: component,
          SVC_ELECTION_BACKEND: "k8s-lease",
          SVC_ELECTION_NAMESPACE: namespace,
          SVC_ELECTION_KUBECONFIG: kubeconfigPath,
          SVC_ELECTION_LOCK_NAME: lockName,
          ...TEST_TIMINGS,
          ...extra,
        },
        { command },
      );
      replicas.push(replica);
      return replica;
    },
    async createPods(...names: string[]) {
      for (const name of names) {
        await core.createNamespacedPod({
          namespace,
          body: {
            metadata: { name, labels: { app: component } },
            spec: { containers: [{ name: "c", image: "none" }] },
          },
        });
      }
    },
    async labelled(): Promise<string[]> {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: `${label}=true` });
      return pods.items.map((p) => p.metadata?.name ?? "");
    },
    async holderOf(lockName: string): Promise<string | undefined> {
      return (await coordination.readNamespacedLease({ name: lockName, namespace })).spec?.holderIdentity;
    },
    async stopAll() {
      await Promise.all(replicas.splice(0).map((r) => r.stop()));
    },
    async remove() {
      await Promise.all(replicas.splice(0).map((r) => r.stop()));
      await testNamespace.remove();
    },
  };
}

/** Waits until exactly one of `pair` says leader on /health/ready, and returns it. */
export function leaderOf(pair: DemoReplica[], timeoutMs = 15_000): Promise<DemoReplica> {
  return waitFor(
    "exactly one leader",
    async () => {
      const roles = await Promise.all(pair.map((r) => r.isLeader()));
      return roles.filter(Boolean).length === 1 ? pair[roles.indexOf(true)] : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
