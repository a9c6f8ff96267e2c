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
import { BACKEND } from "./profile.ts";

/** gRPC port of the backend (the spec names none; ours). */
export const BACKEND_GRPC_PORT = 50063;

/** The backend's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const BackendEnvSchema = Type.Object({
  SVC_BACKEND_SHAPER_ADDRESSES: Type.String({ minLength: 1, description: "comma list of host:port of the shapers" }),
  SVC_BACKEND_TICK_MS: Type.Integer({ minimum: 20, maximum: 60_000, default: 500, description: "worker period" }),
  SVC_BACKEND_JOB_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  SVC_BACKEND_MAX_RUNNING: Type.Integer({ minimum: 1, maximum: 1_000, default: 8, description: "tasks at once" }),
  SVC_BACKEND_TASK_RETENTION_MS: Type.Integer({
    minimum: 1_000,
    maximum: 31_536_000_000,
    default: 86_400_000,
    description: "the cleanup worker deletes finished tasks older than this",
  }),
  ...ModelStoreEnv,
  ...ShardObjectsEnv,
  SVC_COMPONENTS_S3_PREFIX: Type.String({
    pattern: "^([^\\s]*/)?$",
    default: "",
    description: "key prefix, ends in /",
  }),
});

export interface BackendConfig {
  replica: ReplicaConfig;
  shaperAddresses: string[];
  tickMs: number;
  jobTimeoutMs: number;
  maxRunning: number;
  taskRetentionMs: number;
  pgUrl: string;
  schema: string;
  s3: S3Settings & { prefix: string };
}

/** Parses the backend's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseBackendConfig(env: Record<string, string | undefined>): BackendConfig {
  const replica = parseReplicaConfig(BACKEND, env, BACKEND_GRPC_PORT);
  const own = parseEnv(BackendEnvSchema, env);
  return {
    replica,
    shaperAddresses: parseAddressList("SVC_BACKEND_SHAPER_ADDRESSES", own.SVC_BACKEND_SHAPER_ADDRESSES),
    tickMs: own.SVC_BACKEND_TICK_MS,
    jobTimeoutMs: own.SVC_BACKEND_JOB_TIMEOUT_MS,
    maxRunning: own.SVC_BACKEND_MAX_RUNNING,
    taskRetentionMs: own.SVC_BACKEND_TASK_RETENTION_MS,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    s3: { ...shardObjectsSettings(own), prefix: own.SVC_COMPONENTS_S3_PREFIX },
  };
}
