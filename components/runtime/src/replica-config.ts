import { type Static, Type } from "@sinclair/typebox";
import {
  type AuthConfig,
  AuthConfigError,
  parseAuthConfig,
  parseServiceCredentials,
  type ServiceCredentials,
} from "@svc/auth";
import { LISTEN_HOST_PATTERN } from "@svc/common";
import {
  type ComponentProfile,
  type ElectionBackend,
  ElectionError,
  type LeaseTimings,
  parseElectionBackend,
  validateLeaseTimings,
} from "@svc/election";
import { configInvalid, parseEnv } from "./parse-env.ts";

const port = (description: string, fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65_535, default: fallback, description });
const seconds = (description: string) => Type.Optional(Type.Number({ exclusiveMinimum: 0, description }));
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** The settings every HA component replica shares (spec: Limits, States and transitions, Health endpoints). */
export const ReplicaEnvSchema = Type.Object({
  SVC_POD_NAME: Type.String({
    pattern: "^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$",
    description: "this replica's Pod name (default: HOSTNAME): Lease holder, labelled Pod, node id",
  }),
  SVC_ELECTION_BACKEND: Type.Optional(
    Type.String({ description: "<component>.election.backend; default per component" }),
  ),
  SVC_ELECTION_NAMESPACE: Type.String({ minLength: 1, default: "default", description: "namespace of Lease and Pods" }),
  SVC_ELECTION_LOCK_NAME: Type.Optional(Type.String({ pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" })),
  SVC_ELECTION_KUBECONFIG: Type.Optional(Type.String({ minLength: 1, description: "default: client-node's order" })),
  SVC_ELECTION_PG_URL: Type.Optional(Type.String({ pattern: "^postgres(ql)?://", description: "postgres backend" })),
  SVC_ELECTION_PG_TABLE: Type.Optional(Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" })),
  SVC_ELECTION_LEASE_DURATION_SECONDS: seconds("leaseDurationSeconds"),
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: seconds("renewDeadlineSeconds"),
  SVC_ELECTION_RETRY_PERIOD_SECONDS: seconds("retryPeriodSeconds"),
  SVC_ELECTION_LABEL_PODS: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
  SVC_HOST: Type.String({ pattern: LISTEN_HOST_PATTERN, default: "0.0.0.0", description: "address both servers bind" }),
  SVC_ADVERTISE_HOST: Type.String({ minLength: 1, default: "127.0.0.1", description: "host others dial" }),
  SVC_HEALTH_PORT: port("health endpoints (spec example: 8080); 0 = ephemeral", 8080),
  SVC_GRPC_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65_535, description: "0 = ephemeral" })),
  SVC_LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { default: "info" },
  ),
});

type ReplicaEnv = Static<typeof ReplicaEnvSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ReplicaConfig {
  component: string;
  pod: string;
  backend: ElectionBackend;
  namespace: string;
  lockName: string;
  kubeconfigPath: string | undefined;
  pgUrl: string | undefined;
  pgTable: string | undefined;
  timings: LeaseTimings;
  labelPods: boolean;
  host: string;
  advertiseHost: string;
  healthPort: number;
  grpcPort: number;
  logLevel: LogLevel;
  /** `SVC_AUTH_*`: the tokens this replica's gRPC server accepts (every component is behind `@svc/auth`). */
  auth: AuthConfig;
  /**
   * The `svc-components` client's credentials its calls to other components carry (client-credentials grant);
   * `undefined` only when auth is disabled.
   */
  serviceCredentials: ServiceCredentials | undefined;
}

const TIMING_VARIABLES: Record<keyof LeaseTimings, keyof ReplicaEnv> = {
  leaseDurationSeconds: "SVC_ELECTION_LEASE_DURATION_SECONDS",
  renewDeadlineSeconds: "SVC_ELECTION_RENEW_DEADLINE_SECONDS",
  retryPeriodSeconds: "SVC_ELECTION_RETRY_PERIOD_SECONDS",
};

/**
 * Parses a replica's shared settings for `profile` from `env`: the election backend must be one the component
 * supports (spec: Limits), timings follow `validateLeaseTimings`; errors name the variable at fault.
 */
export function parseReplicaConfig(
  profile: ComponentProfile,
  env: Record<string, string | undefined>,
  defaultGrpcPort: number,
): ReplicaConfig {
  const withPod = env.SVC_POD_NAME || !env.HOSTNAME ? env : { ...env, SVC_POD_NAME: env.HOSTNAME.toLowerCase() };
  const parsed = parseEnv(ReplicaEnvSchema, withPod, ["SVC_ELECTION_BACKEND"]);
  let backend: ElectionBackend;
  try {
    backend = parseElectionBackend(profile, parsed.SVC_ELECTION_BACKEND);
  } catch (error) {
    throw configInvalid("SVC_ELECTION_BACKEND", (error as Error).message);
  }
  const timings: LeaseTimings = profile.election
    ? { ...profile.election.lease }
    : { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 };
  for (const [name, variable] of Object.entries(TIMING_VARIABLES) as [keyof LeaseTimings, keyof ReplicaEnv][]) {
    const value = parsed[variable];
    if (typeof value === "number") timings[name] = value;
  }
  try {
    validateLeaseTimings(timings, `${profile.name}.lease`);
  } catch (error) {
    if (!(error instanceof ElectionError)) throw error;
    const name = error.subject?.split(".").at(-1) as keyof LeaseTimings | undefined;
    throw configInvalid((name && TIMING_VARIABLES[name]) ?? "SVC_ELECTION_LEASE_DURATION_SECONDS", error.message);
  }
  if (backend === "postgres" && !parsed.SVC_ELECTION_PG_URL) {
    throw configInvalid("SVC_ELECTION_PG_URL", "required with SVC_ELECTION_BACKEND=postgres");
  }
  let auth: AuthConfig;
  let serviceCredentials: ServiceCredentials | undefined;
  try {
    auth = parseAuthConfig(env);
    serviceCredentials = parseServiceCredentials(env, auth);
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    const variable = error.subject ?? "SVC_AUTH";
    throw configInvalid(variable, error.message.replace(`${variable}: `, ""));
  }
  return {
    component: profile.name,
    pod: parsed.SVC_POD_NAME,
    backend,
    namespace: parsed.SVC_ELECTION_NAMESPACE,
    lockName: parsed.SVC_ELECTION_LOCK_NAME ?? `${profile.name}-leader`,
    kubeconfigPath: parsed.SVC_ELECTION_KUBECONFIG,
    pgUrl: parsed.SVC_ELECTION_PG_URL,
    pgTable: parsed.SVC_ELECTION_PG_TABLE,
    timings,
    labelPods: parsed.SVC_ELECTION_LABEL_PODS === "true" && backend === "k8s-lease",
    host: parsed.SVC_HOST,
    advertiseHost: parsed.SVC_ADVERTISE_HOST,
    healthPort: parsed.SVC_HEALTH_PORT,
    grpcPort: parsed.SVC_GRPC_PORT ?? defaultGrpcPort,
    logLevel: parsed.SVC_LOG_LEVEL as LogLevel,
    auth,
    serviceCredentials,
  };
}
