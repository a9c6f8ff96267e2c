import { Type } from "@sinclair/typebox";
import { type EmitterConfig, loadEmitterConfig } from "@svc/audit-emitter";
import { configInvalid, parseEnv, parseReplicaConfig, type ReplicaConfig } from "@svc/component-runtime";
import { ENDPOINT } from "./profile.ts";

/** The components endpoint routes to or reports on (spec: `/health/deps`). */
export const ROUTED_COMPONENTS = ["backend", "orchestrator", "compute", "shaper"] as const;
export type RoutedComponent = (typeof ROUTED_COMPONENTS)[number];

/** One replica endpoint may route to: its gRPC address and its health server (`host:port` each). */
export interface ReplicaAddress {
  grpc: string;
  health: string;
}

/** How endpoint finds each component's replicas: listed addresses, or labelled Pods on the kube-apiserver. */
export type Discovery =
  | { mode: "static"; replicas: Record<RoutedComponent, ReplicaAddress[]> }
  | { mode: "k8s"; namespace: string; kubeconfigPath: string | undefined };

const replicas = (component: string) =>
  Type.Optional(
    Type.String({ description: `static discovery: comma list of host:grpcPort/healthPort of every ${component}` }),
  );

/** endpoint's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const EndpointEnvSchema = Type.Object({
  SVC_ENDPOINT_ADMIN_PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 8081, description: "/admin/*" }),
  SVC_ENDPOINT_DISCOVERY: Type.Union([Type.Literal("k8s"), Type.Literal("static")], { default: "k8s" }),
  SVC_ENDPOINT_NAMESPACE: Type.String({ minLength: 1, default: "default", description: "k8s discovery" }),
  SVC_ENDPOINT_KUBECONFIG: Type.Optional(Type.String({ minLength: 1 })),
  SVC_ENDPOINT_PROBE_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 500, description: "leader probe" }),
  SVC_ENDPOINT_CALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  SVC_ENDPOINT_BACKEND_REPLICAS: replicas("backend"),
  SVC_ENDPOINT_ORCHESTRATOR_REPLICAS: replicas("orchestrator"),
  SVC_ENDPOINT_COMPUTE_REPLICAS: replicas("compute"),
  SVC_ENDPOINT_SHAPER_REPLICAS: replicas("shaper"),
});

export interface EndpointConfig {
  replica: ReplicaConfig;
  adminPort: number;
  discovery: Discovery;
  probeMs: number;
  callTimeoutMs: number;
  audit: EmitterConfig;
}

const REPLICA = /^([A-Za-z0-9.\-[\]:]+):(\d{1,5})\/(\d{1,5})$/;

function parseReplicas(variable: string, value: string | undefined): ReplicaAddress[] {
  if (value === undefined) return [];
  return value.split(",").map((entry) => {
    const match = REPLICA.exec(entry.trim());
    if (!match) throw configInvalid(variable, `expected host:grpcPort/healthPort, got ${JSON.stringify(entry)}`);
    return { grpc: `${match[1]}:${match[2]}`, health: `${match[1]}:${match[3]}` };
  });
}

const wrapped = (subject: string, error: unknown) => {
  const variable = (error as { subject?: string }).subject ?? subject;
  return configInvalid(variable, (error as Error).message);
};

/** Parses endpoint's settings (`SVC_AUTH_*` come with the replica's, as for every component); throws naming the variable. */
export function parseEndpointConfig(env: Record<string, string | undefined>): EndpointConfig {
  const replica = parseReplicaConfig(ENDPOINT, env, ENDPOINT.grpcPort ?? 50050);
  const own = parseEnv(EndpointEnvSchema, env);
  let discovery: Discovery;
  if (own.SVC_ENDPOINT_DISCOVERY === "static") {
    discovery = {
      mode: "static",
      replicas: {
        backend: parseReplicas("SVC_ENDPOINT_BACKEND_REPLICAS", own.SVC_ENDPOINT_BACKEND_REPLICAS),
        orchestrator: parseReplicas("SVC_ENDPOINT_ORCHESTRATOR_REPLICAS", own.SVC_ENDPOINT_ORCHESTRATOR_REPLICAS),
        compute: parseReplicas("SVC_ENDPOINT_COMPUTE_REPLICAS", own.SVC_ENDPOINT_COMPUTE_REPLICAS),
        shaper: parseReplicas("SVC_ENDPOINT_SHAPER_REPLICAS", own.SVC_ENDPOINT_SHAPER_REPLICAS),
      },
    };
    if (discovery.replicas.backend.length === 0) {
      throw configInvalid("SVC_ENDPOINT_BACKEND_REPLICAS", "required with SVC_ENDPOINT_DISCOVERY=static");
    }
  } else {
    discovery = { mode: "k8s", namespace: own.SVC_ENDPOINT_NAMESPACE, kubeconfigPath: own.SVC_ENDPOINT_KUBECONFIG };
  }
  let audit: EmitterConfig;
  try {
    audit = loadEmitterConfig(env, { source: "endpoint" });
  } catch (error) {
    throw wrapped("SVC_AUDIT", error);
  }
  return {
    replica,
    adminPort: own.SVC_ENDPOINT_ADMIN_PORT,
    discovery,
    probeMs: own.SVC_ENDPOINT_PROBE_MS,
    callTimeoutMs: own.SVC_ENDPOINT_CALL_TIMEOUT_MS,
    audit,
  };
}
