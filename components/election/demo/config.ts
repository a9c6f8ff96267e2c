import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { LISTEN_HOST_PATTERN } from "@svc/common";
import {
  type ElectionBackend,
  ElectionError,
  type LeaseTimings,
  parseElectionBackend,
  validateLeaseTimings,
} from "../index.ts";
import { DEMO_PROFILES } from "./profiles.ts";

const port = (description: string, fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65_535, default: fallback, description });
const seconds = (description: string) => Type.Optional(Type.Number({ exclusiveMinimum: 0, description }));

/** The demo replica's environment. Only these keys are read. */
export const DemoEnvSchema = Type.Object({
  SVC_ELECTION_COMPONENT: Type.Union(
    Object.keys(DEMO_PROFILES).map((name) => Type.Literal(name)),
    { description: "HA component this replica plays" },
  ),
  SVC_ELECTION_POD_NAME: Type.String({ pattern: "^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", description: "Pod name" }),
  SVC_ELECTION_BACKEND: Type.Optional(Type.String({ description: "election.backend; default per component" })),
  SVC_ELECTION_NAMESPACE: Type.String({ minLength: 1, default: "default", description: "namespace of Lease, Pods" }),
  SVC_ELECTION_LOCK_NAME: Type.Optional(Type.String({ pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" })),
  SVC_ELECTION_KUBECONFIG: Type.Optional(Type.String({ minLength: 1, description: "default: client-node's order" })),
  SVC_ELECTION_PG_URL: Type.Optional(Type.String({ pattern: "^postgres(ql)?://", description: "postgres backend" })),
  SVC_ELECTION_PG_TABLE: Type.Optional(Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" })),
  SVC_ELECTION_LEASE_DURATION_SECONDS: seconds("leaseDurationSeconds"),
  SVC_ELECTION_RENEW_DEADLINE_SECONDS: seconds("renewDeadlineSeconds"),
  SVC_ELECTION_RETRY_PERIOD_SECONDS: seconds("retryPeriodSeconds"),
  SVC_ELECTION_LABEL_PODS: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
  SVC_ELECTION_HOST: Type.String({
    pattern: LISTEN_HOST_PATTERN,
    default: "127.0.0.1",
    description: "address of both servers",
  }),
  SVC_ELECTION_HEALTH_PORT: port("health endpoints (spec example: 8080)", 8080),
  SVC_ELECTION_GRPC_PORT: port("demo gRPC service; 0 = ephemeral", 0),
});

type DemoEnv = Static<typeof DemoEnvSchema>;

export interface DemoConfig {
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
  healthPort: number;
  grpcPort: number;
}

const invalid = (field: string, message: string) => new ElectionError("ELECTION_CONFIG_INVALID", field, message);

const TIMING_VARIABLES: Record<keyof LeaseTimings, keyof DemoEnv> = {
  leaseDurationSeconds: "SVC_ELECTION_LEASE_DURATION_SECONDS",
  renewDeadlineSeconds: "SVC_ELECTION_RENEW_DEADLINE_SECONDS",
  retryPeriodSeconds: "SVC_ELECTION_RETRY_PERIOD_SECONDS",
};

/** Parses the demo's settings from `env`; throws ElectionError naming the variable (and the spec key) at fault. */
export function parseDemoConfig(env: Record<string, string | undefined>): DemoConfig {
  const picked: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(DemoEnvSchema.properties)) {
    const raw = env[key];
    if (raw === undefined || (raw === "" && key !== "SVC_ELECTION_BACKEND")) continue;
    if (schema.type === "integer" || schema.type === "number") {
      const value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value))
        throw invalid(key, `expected a number (got ${JSON.stringify(raw)})`);
      picked[key] = value;
    } else picked[key] = raw;
  }
  const withDefaults = Value.Default(DemoEnvSchema, picked);
  const first = Value.Errors(DemoEnvSchema, withDefaults).First();
  if (first) {
    const field = first.path.replace(/^\//, "") || "environment";
    throw invalid(field, `${first.message} (got ${JSON.stringify(first.value)})`);
  }
  const parsed = withDefaults as DemoEnv;
  const profile = DEMO_PROFILES[parsed.SVC_ELECTION_COMPONENT];
  if (!profile?.election) throw invalid("SVC_ELECTION_COMPONENT", "unknown component");

  let backend: ElectionBackend;
  try {
    backend = parseElectionBackend(profile, parsed.SVC_ELECTION_BACKEND);
  } catch (error) {
    if (!(error instanceof ElectionError)) throw error;
    throw new ElectionError(error.code, "SVC_ELECTION_BACKEND", error.message);
  }
  const timings: LeaseTimings = { ...profile.election.lease };
  for (const [name, variable] of Object.entries(TIMING_VARIABLES) as [keyof LeaseTimings, keyof DemoEnv][]) {
    const value = parsed[variable];
    if (typeof value === "number") timings[name] = value;
  }
  try {
    validateLeaseTimings(timings, `${profile.name}.lease`);
  } catch (error) {
    if (!(error instanceof ElectionError) || error.subject === undefined) throw error;
    const name = error.subject.split(".").at(-1) as keyof LeaseTimings;
    throw new ElectionError(error.code, TIMING_VARIABLES[name] ?? error.subject, error.message);
  }
  if (backend === "postgres" && !parsed.SVC_ELECTION_PG_URL) {
    throw invalid("SVC_ELECTION_PG_URL", "required with SVC_ELECTION_BACKEND=postgres");
  }
  return {
    component: profile.name,
    pod: parsed.SVC_ELECTION_POD_NAME,
    backend,
    namespace: parsed.SVC_ELECTION_NAMESPACE,
    lockName: parsed.SVC_ELECTION_LOCK_NAME ?? `${profile.name}-leader`,
    kubeconfigPath: parsed.SVC_ELECTION_KUBECONFIG,
    pgUrl: parsed.SVC_ELECTION_PG_URL,
    pgTable: parsed.SVC_ELECTION_PG_TABLE,
    timings,
    labelPods: parsed.SVC_ELECTION_LABEL_PODS === "true" && backend === "k8s-lease",
    host: parsed.SVC_ELECTION_HOST,
    healthPort: parsed.SVC_ELECTION_HEALTH_PORT,
    grpcPort: parsed.SVC_ELECTION_GRPC_PORT,
  };
}
