import { join } from "node:path";
import {
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Role,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { makeKubeClient } from "@svc/kube";

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
  const token = await core.createNamespacedServiceAccountToken({
    name: account,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !token.status?.token) throw new Error("no cluster or no token");
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: account, token: token.status.token }],
    contexts: [{ name: "sa", cluster: cluster.name, user: account, namespace }],
    currentContext: "sa",
  });
  return {
    kubeconfig,
    token: token.status.token,
    async remove() {
      await rbac.deleteNamespacedRoleBinding({ name: binding.metadata?.name ?? "", namespace });
      await rbac.deleteNamespacedRole({ name: role.metadata?.name ?? "", namespace });
      await core.deleteNamespacedServiceAccount({ name: account, namespace });
    },
  };
}
