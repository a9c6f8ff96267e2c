import { Type } from "@sinclair/typebox";
import { ModelStoreEnv, parseEnv, parseReplicaConfig, type ReplicaConfig } from "@svc/component-runtime";
import { ORCHESTRATOR } from "./profile.ts";

/** gRPC port of the orchestrator (the spec names none; ours, beside endpoint's 50050 and audit's 50052). */
export const ORCHESTRATOR_GRPC_PORT = 50061;

/** The orchestrator's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const OrchestratorEnvSchema = Type.Object({
  ...ModelStoreEnv,
  SVC_ORCHESTRATOR_TICK_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1_000, description: "supervision" }),
  SVC_ORCHESTRATOR_NODE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5_000,
    description: "a node silent this long (database clock) is lost",
  }),
});

export interface OrchestratorConfig {
  replica: ReplicaConfig;
  pgUrl: string;
  schema: string;
  tickMs: number;
  nodeTimeoutMs: number;
}

/** Parses the orchestrator's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseOrchestratorConfig(env: Record<string, string | undefined>): OrchestratorConfig {
  const replica = parseReplicaConfig(ORCHESTRATOR, env, ORCHESTRATOR_GRPC_PORT);
  const own = parseEnv(OrchestratorEnvSchema, env);
  return {
    replica,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    tickMs: own.SVC_ORCHESTRATOR_TICK_MS,
    nodeTimeoutMs: own.SVC_ORCHESTRATOR_NODE_TIMEOUT_MS,
  };
}
