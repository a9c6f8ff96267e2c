import { ApiException, CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import type { StackContext } from "../context.ts";
import { kubeconfigPath } from "./kube-apiserver.ts";

const statusOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);

type KubeClients = { core: CoreV1Api; coordination: CoordinationV1Api };
const clientsOf = new WeakMap<StackContext, KubeClients>();

/**
 * The stack's kube-apiserver, as its admin (the kubeconfig `up` wrote into the state directory): loaded once per
 * context, not on each poll of `up`'s wait for the leaders.
 */
export function kubeClients(ctx: StackContext): KubeClients {
  let clients = clientsOf.get(ctx);
  if (!clients) {
    const kubeconfig = loadKubeConfig(kubeconfigPath(ctx));
    clients = {
      core: makeKubeClient(kubeconfig, CoreV1Api),
      coordination: makeKubeClient(kubeconfig, CoordinationV1Api),
    };
    clientsOf.set(ctx, clients);
  }
  return clients;
}

/**
 * The Pod object of a replica (`app=<component>`), and its namespace, created when missing. No scheduler runs, so
 * the Pod stays Pending: it is the object the replica's elector labels and annotates, as in a cluster. A Pod left
 * by an earlier run is kept; a stale leader label on it is removed by the next leader.
 */
export async function ensureReplicaPod(ctx: StackContext, pod: string, component: string): Promise<void> {
  const { core } = kubeClients(ctx);
  const namespace = ctx.config.services.namespace;
  const created = async (create: () => Promise<unknown>) => {
    try {
      await create();
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  };
  await created(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await created(() =>
    core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: pod, labels: { app: component } },
        spec: { containers: [{ name: component, image: "none" }] },
      },
    }),
  );
}

/** The Pods of `component` carrying its leader label (`svc.ai/<component>-leader=true`, spec: Limits). */
export async function labelledPods(ctx: StackContext, component: string): Promise<string[]> {
  const list = await kubeClients(ctx).core.listNamespacedPod({
    namespace: ctx.config.services.namespace,
    labelSelector: `svc.ai/${component}-leader=true`,
  });
  return list.items.map((pod) => pod.metadata?.name ?? "").sort();
}

/** The holder of `component`'s Lease (`<component>-leader`); undefined while there is none. */
export async function leaseHolder(ctx: StackContext, component: string): Promise<string | undefined> {
  try {
    const lease = await kubeClients(ctx).coordination.readNamespacedLease({
      name: `${component}-leader`,
      namespace: ctx.config.services.namespace,
    });
    return lease.spec?.holderIdentity || undefined;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}
