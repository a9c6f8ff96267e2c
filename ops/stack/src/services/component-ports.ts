import type { StackConfig } from "../config.ts";

/** What `up --services` runs, in the order of their ports (endpoint first: the one applications call). */
export const SERVICE_COMPONENTS = ["endpoint", "orchestrator", "backend", "compute", "shaper"] as const;
export type ServiceComponent = (typeof SERVICE_COMPONENTS)[number];
/** Two replicas of each: their Pod names are `<component>-a` and `<component>-b`. */
export const REPLICA_SUFFIXES = ["a", "b"] as const;

export interface ReplicaPorts {
  grpc: number;
  health: number;
  /** endpoint's `/admin/*` (the HA components have none). */
  admin: number | undefined;
}

export const replicaNames = (component: ServiceComponent): string[] =>
  REPLICA_SUFFIXES.map((suffix) => `${component}-${suffix}`);

/**
 * Fixed ports of replica `index` of `component`: `base_port + 10 * component + 3 * replica`, then gRPC, health and
 * (endpoint only) admin on consecutive ports. The highest offset is config.ts's SERVICES_PORT_SPAN.
 */
export function replicaPorts(config: StackConfig, component: ServiceComponent, index: number): ReplicaPorts {
  const first = config.services.base_port + 10 * SERVICE_COMPONENTS.indexOf(component) + 3 * index;
  return { grpc: first, health: first + 1, admin: component === "endpoint" ? first + 2 : undefined };
}

/** The gRPC `127.0.0.1:port` of every replica of `component`. */
export const grpcAddresses = (config: StackConfig, component: ServiceComponent): string[] =>
  REPLICA_SUFFIXES.map((_, index) => `127.0.0.1:${replicaPorts(config, component, index).grpc}`);
