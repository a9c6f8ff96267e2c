/** The four components with an election, each run as two replicas (docs/components.md). */
export const HA_COMPONENTS = ["orchestrator", "backend", "compute", "shaper"] as const;
export type HaComponent = (typeof HA_COMPONENTS)[number];
/** Every process of a deployment: the HA components and the stateless `endpoint`. */
export type DeployedComponent = HaComponent | "endpoint";

/**
 * What a whole deployment on one kube-apiserver shares: the namespace of its Pods and Leases, the model's
 * PostgreSQL schema and bucket, the issuer endpoint trusts, and where each component's replicas listen.
 */
export interface DeploymentSettings {
  /** Namespace of the Pods and Leases (election and endpoint's discovery). */
  namespace: string;
  kubeconfig: string;
  pgUrl: string;
  /** PostgreSQL schema of the model's tables. */
  schema: string;
  s3: {
    endpoint: string;
    region: string;
    accessKey: string;
    secretKey: string;
    bucket: string;
    /** Key prefix of the backend's shard objects: empty, or ending in "/". */
    prefix: string;
  };
  /** `SVC_AUTH_ISSUER` of every component: the realm whose tokens they accept and whose tokens they call with. */
  authIssuer: string;
  /** The secret of the realm's `svc-components` client: every component's calls to another carry its token. */
  componentsClientSecret: string;
  /** The gRPC `host:port` of every replica of the orchestrator (for compute) and of the shaper (for backend). */
  grpcAddresses: Record<"orchestrator" | "shaper", readonly string[]>;
  /**
   * `spec`: every component's profile timings and default periods (what runs for real). `fast`: 3/2/0.5 s leases
   * and short ticks, so the tests' failovers take seconds.
   */
  timings: "spec" | "fast";
}

/**
 * The environment of one replica of `component` in a deployment, apart from what is the replica's own (pod name,
 * ports, endpoint's admin port and audit target): every HA component on `k8s-lease`, endpoint finding leaders by
 * the leader label in the same namespace.
 */
export function deploymentEnv(component: DeployedComponent, settings: DeploymentSettings): Record<string, string> {
  const fast = settings.timings === "fast";
  // Without a value, each component's default period applies.
  const fastPeriod = (name: string, ms: string): Record<string, string> => (fast ? { [name]: ms } : {});
  const auth = { SVC_AUTH_ISSUER: settings.authIssuer, SVC_AUTH_CLIENT_SECRET: settings.componentsClientSecret };
  const election = {
    ...auth,
    SVC_ELECTION_BACKEND: "k8s-lease",
    SVC_ELECTION_KUBECONFIG: settings.kubeconfig,
    SVC_ELECTION_NAMESPACE: settings.namespace,
    ...(fast
      ? {
          SVC_ELECTION_LEASE_DURATION_SECONDS: "3",
          SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2",
          SVC_ELECTION_RETRY_PERIOD_SECONDS: "0.5",
        }
      : {}),
    SVC_COMPONENTS_PG_URL: settings.pgUrl,
    SVC_COMPONENTS_PG_SCHEMA: settings.schema,
  };
  const s3 = {
    SVC_COMPONENTS_S3_ENDPOINT: settings.s3.endpoint,
    SVC_COMPONENTS_S3_REGION: settings.s3.region,
    SVC_COMPONENTS_S3_ACCESS_KEY: settings.s3.accessKey,
    SVC_COMPONENTS_S3_SECRET_KEY: settings.s3.secretKey,
    SVC_COMPONENTS_S3_BUCKET: settings.s3.bucket,
  };
  switch (component) {
    case "orchestrator":
      return {
        ...election,
        ...fastPeriod("SVC_ORCHESTRATOR_TICK_MS", "200"),
        ...fastPeriod("SVC_ORCHESTRATOR_NODE_TIMEOUT_MS", "1500"),
      };
    case "compute":
      return {
        ...election,
        ...s3,
        SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: settings.grpcAddresses.orchestrator.join(","),
        ...fastPeriod("SVC_COMPUTE_HEARTBEAT_MS", "200"),
      };
    case "shaper":
      return { ...election };
    case "backend":
      return {
        ...election,
        ...s3,
        SVC_BACKEND_SHAPER_ADDRESSES: settings.grpcAddresses.shaper.join(","),
        SVC_COMPONENTS_S3_PREFIX: settings.s3.prefix,
        ...fastPeriod("SVC_BACKEND_TICK_MS", "100"),
      };
    case "endpoint":
      return {
        SVC_ENDPOINT_DISCOVERY: "k8s",
        SVC_ENDPOINT_NAMESPACE: settings.namespace,
        SVC_ENDPOINT_KUBECONFIG: settings.kubeconfig,
        ...fastPeriod("SVC_ENDPOINT_PROBE_MS", "100"),
        ...auth,
      };
  }
}
