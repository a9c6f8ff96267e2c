import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { makeKubeClient } from "@svc/kube";

/**
 * A kubeconfig acting as ServiceAccount `account` of `namespace` on `admin`'s cluster, with a TokenRequest token
 * (one hour), so a test sees what that account's RBAC allows.
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  namespace: string,
  account: string,
): Promise<KubeConfig> {
  const token = await makeKubeClient(admin, CoreV1Api).createNamespacedServiceAccountToken({
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
  return kubeconfig;
}
