import { CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { makeKubeClient } from "@svc/kube";
import { randomName } from "./names.ts";

/** A namespace of one test file, and its removal. */
export interface TestNamespace {
  name: string;
  /** Deletes the Leases and Pods tests make, then the namespace itself. */
  remove(): Promise<void>;
}

/**
 * The local stack runs no controller-manager, so a deleted namespace would stay `Terminating` for ever. `remove`
 * does the namespace controller's part: it deletes the kinds of objects tests create (Leases, Pods; an unscheduled
 * Pod goes at once), then clears the namespace's finalizer.
 */
export async function createTestNamespace(kubeconfig: KubeConfig, purpose = "ns"): Promise<TestNamespace> {
  const core = makeKubeClient(kubeconfig, CoreV1Api);
  const coordination = makeKubeClient(kubeconfig, CoordinationV1Api);
  const name = randomName(purpose);
  await core.createNamespace({ body: { metadata: { name } } });
  return {
    name,
    async remove() {
      await coordination.deleteCollectionNamespacedLease({ namespace: name });
      await core.deleteCollectionNamespacedPod({ namespace: name, gracePeriodSeconds: 0 });
      await core.deleteNamespace({ name });
      const namespace = await core.readNamespace({ name });
      await core.replaceNamespaceFinalize({ name, body: { ...namespace, spec: { finalizers: [] } } });
    },
  };
}
