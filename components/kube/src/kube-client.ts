import { type Configuration, createConfiguration, KubeConfig, ServerConfiguration } from "@kubernetes/client-node";
import { BunFetchHttpLibrary, kubeTls } from "./bun-fetch-http.ts";

export type ApiConstructor<T> = new (configuration: Configuration) => T;

/**
 * The kubeconfig file at `path`; without one, client-node's default order: `$KUBECONFIG`, then `~/.kube/config`,
 * then the in-cluster service account.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kubeconfig = new KubeConfig();
  if (path) kubeconfig.loadFromFile(path);
  else kubeconfig.loadFromDefault();
  return kubeconfig;
}

/** Like `KubeConfig.makeApiClient`, but its requests go through Bun's fetch with the kubeconfig's TLS material. */
export function makeKubeClient<T>(kubeconfig: KubeConfig, api: ApiConstructor<T>): T {
  const cluster = kubeconfig.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kubeconfig },
    httpApi: new BunFetchHttpLibrary(kubeTls(kubeconfig)),
  });
  return new api(configuration);
}
