import { Type } from "@sinclair/typebox";
import {
  ModelStoreEnv,
  parseAddressList,
  parseEnv,
  parseReplicaConfig,
  type ReplicaConfig,
  type S3Settings,
  ShardObjectsEnv,
  shardObjectsSettings,
} from "@svc/component-runtime";
import { COMPUTE } from "./profile.ts";

/** gRPC port of compute (the spec names none; ours, beside the orchestrator's 50061). */
export const COMPUTE_GRPC_PORT = 50062;

/** Compute's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const ComputeEnvSchema = Type.Object({
  SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: Type.String({
    minLength: 1,
    description: "comma list of host:port of every orchestrator replica (the serving one is found by trying)",
  }),
  SVC_COMPUTE_HEARTBEAT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1_000 }),
  SVC_COMPUTE_CAPACITY_SHARDS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: "0: no limit" }),
  SVC_COMPUTE_LOAD_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 10_000,
    description: "bound of loading one shard (record and object); a shard not loaded in time is tried at the next sync",
  }),
  ...ModelStoreEnv,
  ...ShardObjectsEnv,
});

export interface ComputeConfig {
  replica: ReplicaConfig;
  orchestratorAddresses: string[];
  heartbeatMs: number;
  capacityShards: number;
  loadTimeoutMs: number;
  pgUrl: string;
  schema: string;
  s3: S3Settings;
}

/** Parses compute's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseComputeConfig(env: Record<string, string | undefined>): ComputeConfig {
  const replica = parseReplicaConfig(COMPUTE, env, COMPUTE_GRPC_PORT);
  const own = parseEnv(ComputeEnvSchema, env);
  return {
    replica,
    orchestratorAddresses: parseAddressList(
      "SVC_COMPUTE_ORCHESTRATOR_ADDRESSES",
      own.SVC_COMPUTE_ORCHESTRATOR_ADDRESSES,
    ),
    heartbeatMs: own.SVC_COMPUTE_HEARTBEAT_MS,
    capacityShards: own.SVC_COMPUTE_CAPACITY_SHARDS,
    loadTimeoutMs: own.SVC_COMPUTE_LOAD_TIMEOUT_MS,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    s3: shardObjectsSettings(own),
  };
}
