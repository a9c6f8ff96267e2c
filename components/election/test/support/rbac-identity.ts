import { join } from "node:path";
import {
  CoreV1Api,
  type KubeConfig,
  RbacAuthorizationV1Api,
  type V1Role,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { makeKubeClient } from "@svc/kube";
import { serviceAccountKubeConfig } from "@svc/testkit";

const RBAC_FILE = join(import.meta.dir, "../../../../ops/k8s/election-rbac.yaml");

/**
 * A kubeconfig for ServiceAccount `svc-orchestrator` of `namespace`, bound by exactly the Role of
 * `ops/k8s/election-rbac.yaml` (the stack's apiserver authorizes with RBAC), and the clean-up of what it made.
 */
export async function electionIdentity(admin: KubeConfig, namespace: string) {
  const core = makeKubeClient(admin, CoreV1Api);
  const rbac = makeKubeClient(admin, RbacAuthorizationV1Api);
  const docs = Bun.YAML.parse(await Bun.file(RBAC_FILE).text()) as [V1Role, V1RoleBinding];
  const [role, binding] = docs;
  await rbac.createNamespacedRole({ namespace, body: role });
  await rbac.createNamespacedRoleBinding({ namespace, body: binding });
  const account = "svc-orchestrator";
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  const kubeconfig = await serviceAccountKubeConfig(admin, namespace, account);
  return {
    kubeconfig,
    async remove() {
      await rbac.deleteNamespacedRoleBinding({ name: binding.metadata?.name ?? "", namespace });
      await rbac.deleteNamespacedRole({ name: role.metadata?.name ?? "", namespace });
      await core.deleteNamespacedServiceAccount({ name: account, namespace });
    },
  };
}
