import { Type } from "@sinclair/typebox";
import { configInvalid, parseEnv, parseReplicaConfig, type ReplicaConfig } from "@svc/component-runtime";
import { BACKEND } from "./profile.ts";

/** gRPC port of the backend (the spec names none; ours). */
export const BACKEND_GRPC_PORT = 50063;

const ADDRESS = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/;

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
  SVC_COMPONENTS_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the model" }),
  SVC_COMPONENTS_PG_SCHEMA: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$", default: "svc_components" }),
  SVC_COMPONENTS_S3_ENDPOINT: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$" })),
  SVC_COMPONENTS_S3_REGION: Type.String({ minLength: 1, default: "us-east-1" }),
  SVC_COMPONENTS_S3_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_BUCKET: Type.String({ minLength: 3, maxLength: 63, description: "bucket of shard objects" }),
  SVC_COMPONENTS_S3_PREFIX: Type.String({
    pattern: "^([^\\s]*/)?$",
    default: "",
    description: "key prefix, ends in /",
  }),
  SVC_COMPONENTS_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
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
  s3: {
    endpoint: string | undefined;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    bucket: string;
    prefix: string;
    forcePathStyle: boolean;
  };
}

/** Parses the backend's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseBackendConfig(env: Record<string, string | undefined>): BackendConfig {
  const replica = parseReplicaConfig(BACKEND, env, BACKEND_GRPC_PORT);
  const own = parseEnv(BackendEnvSchema, env);
  const addresses = own.SVC_BACKEND_SHAPER_ADDRESSES.split(",").map((a) => a.trim());
  const bad = addresses.find((a) => !ADDRESS.test(a));
  if (bad !== undefined) {
    throw configInvalid("SVC_BACKEND_SHAPER_ADDRESSES", `expected host:port, got ${JSON.stringify(bad)}`);
  }
  const accessKeyId = own.SVC_COMPONENTS_S3_ACCESS_KEY;
  const secretAccessKey = own.SVC_COMPONENTS_S3_SECRET_KEY;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw configInvalid("SVC_COMPONENTS_S3_SECRET_KEY", "SVC_COMPONENTS_S3_ACCESS_KEY and _SECRET_KEY go together");
  }
  return {
    replica,
    shaperAddresses: addresses,
    tickMs: own.SVC_BACKEND_TICK_MS,
    jobTimeoutMs: own.SVC_BACKEND_JOB_TIMEOUT_MS,
    maxRunning: own.SVC_BACKEND_MAX_RUNNING,
    taskRetentionMs: own.SVC_BACKEND_TASK_RETENTION_MS,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    s3: {
      endpoint: own.SVC_COMPONENTS_S3_ENDPOINT,
      region: own.SVC_COMPONENTS_S3_REGION,
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
      bucket: own.SVC_COMPONENTS_S3_BUCKET,
      prefix: own.SVC_COMPONENTS_S3_PREFIX,
      forcePathStyle: own.SVC_COMPONENTS_S3_FORCE_PATH_STYLE === "true",
    },
  };
}
