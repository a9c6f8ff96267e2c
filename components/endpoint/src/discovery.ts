import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { ADDRESS_ANNOTATIONS } from "@svc/component-runtime";
import { leaderLabelOf } from "@svc/election";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import type { Discovery, ReplicaAddress, RoutedComponent } from "./config.ts";

/** Lists the replicas a component's route may probe. */
export type Discover = () => Promise<ReplicaAddress[]>;

/** Default gRPC ports of the components (config.ts of each) and the health port, for Pods without annotations. */
const DEFAULT_GRPC_PORTS: Record<RoutedComponent, number> = {
  orchestrator: 50061,
  compute: 50062,
  backend: 50063,
  shaper: 50064,
};
const DEFAULT_HEALTH_PORT = 8080;

function addressOf(pod: V1Pod, component: RoutedComponent): ReplicaAddress | undefined {
  const annotations = pod.metadata?.annotations ?? {};
  const ip = pod.status?.podIP;
  const grpc = annotations[ADDRESS_ANNOTATIONS.grpc] ?? (ip ? `${ip}:${DEFAULT_GRPC_PORTS[component]}` : undefined);
  const health = annotations[ADDRESS_ANNOTATIONS.health] ?? (ip ? `${ip}:${DEFAULT_HEALTH_PORT}` : undefined);
  return grpc && health ? { grpc, health } : undefined;
}

/**
 * The Pods a cluster Service would route to (spec: "Services route only to the labelled pod"): those carrying
 * `svc.ai/<component>-leader=true`; when none does (a component without HA, or between a crash and the new label),
 * the component's Pods (`app=<component>`). Either way only a replica whose `/health/ready` answers 200 is used
 * (ComponentRoute), so a follower or a stale label is never routed to.
 */
export function labelDiscovery(core: CoreV1Api, namespace: string, component: RoutedComponent): Discover {
  return async () => {
    const labelled = await core.listNamespacedPod({ namespace, labelSelector: `${leaderLabelOf(component)}=true` });
    const pods =
      labelled.items.length > 0
        ? labelled.items
        : (await core.listNamespacedPod({ namespace, labelSelector: `app=${component}` })).items;
    return pods.flatMap((pod) => addressOf(pod, component) ?? []);
  };
}

/** Each component's `Discover` under the configured mode: its listed replicas, or its labelled Pods. */
export function discoveryOf(discovery: Discovery): (component: RoutedComponent) => Discover {
  if (discovery.mode === "static") return (component) => async () => [...discovery.replicas[component]];
  const core = makeKubeClient(loadKubeConfig(discovery.kubeconfigPath), CoreV1Api);
  return (component) => labelDiscovery(core, discovery.namespace, component);
}
