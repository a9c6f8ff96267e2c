import { Type } from "@sinclair/typebox";
import { ModelStoreEnv, parseEnv, parseReplicaConfig, type ReplicaConfig } from "@svc/component-runtime";
import { SHAPER, SHAPER_TERMINATION_GRACE_SECONDS } from "./profile.ts";

/** gRPC port of the shaper (the spec names none; ours). */
export const SHAPER_GRPC_PORT = 50064;

/** The shaper's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const ShaperEnvSchema = Type.Object({
  ...ModelStoreEnv,
  SVC_SHAPER_TERMINATION_GRACE_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3_600,
    default: SHAPER_TERMINATION_GRACE_SECONDS,
    description: "shaper.terminationGracePeriodSeconds: in-flight jobs may finish within it after SIGTERM",
  }),
  SVC_SHAPER_JOB_WORK_MS: Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 0,
    description: "time one job works (the data plane is not shown; tests use it to have jobs in flight)",
  }),
});

export interface ShaperConfig {
  replica: ReplicaConfig;
  pgUrl: string;
  schema: string;
  graceSeconds: number;
  jobWorkMs: number;
}

/** Parses the shaper's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseShaperConfig(env: Record<string, string | undefined>): ShaperConfig {
  const replica = parseReplicaConfig(SHAPER, env, SHAPER_GRPC_PORT);
  const own = parseEnv(ShaperEnvSchema, env);
  return {
    replica,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    graceSeconds: own.SVC_SHAPER_TERMINATION_GRACE_SECONDS,
    jobWorkMs: own.SVC_SHAPER_JOB_WORK_MS,
  };
}
