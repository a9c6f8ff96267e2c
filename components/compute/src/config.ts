import { Type } from "@sinclair/typebox";
import { configInvalid, parseEnv, parseReplicaConfig, type ReplicaConfig } from "@svc/component-runtime";
import { COMPUTE } from "./profile.ts";

/** gRPC port of compute (the spec names none; ours, beside the orchestrator's 50061). */
export const COMPUTE_GRPC_PORT = 50062;

const ADDRESS = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/;

/** Compute's own settings; the replica's shared ones are `ReplicaEnvSchema` (@svc/component-runtime). */
export const ComputeEnvSchema = Type.Object({
  SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: Type.String({
    minLength: 1,
    description: "comma list of host:port of every orchestrator replica (the serving one is found by trying)",
  }),
  SVC_COMPUTE_HEARTBEAT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1_000 }),
  SVC_COMPUTE_CAPACITY_SHARDS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: "0: no limit" }),
  SVC_COMPONENTS_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the model" }),
  SVC_COMPONENTS_PG_SCHEMA: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$", default: "svc_components" }),
  SVC_COMPONENTS_S3_ENDPOINT: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$" })),
  SVC_COMPONENTS_S3_REGION: Type.String({ minLength: 1, default: "us-east-1" }),
  SVC_COMPONENTS_S3_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_BUCKET: Type.String({ minLength: 3, maxLength: 63, description: "bucket of shard objects" }),
  SVC_COMPONENTS_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
});

export interface S3Settings {
  endpoint: string | undefined;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  bucket: string;
  forcePathStyle: boolean;
}

export interface ComputeConfig {
  replica: ReplicaConfig;
  orchestratorAddresses: string[];
  heartbeatMs: number;
  capacityShards: number;
  pgUrl: string;
  schema: string;
  s3: S3Settings;
}

/** Parses compute's settings from `env`; throws `RUNTIME_CONFIG_INVALID` naming the variable. */
export function parseComputeConfig(env: Record<string, string | undefined>): ComputeConfig {
  const replica = parseReplicaConfig(COMPUTE, env, COMPUTE_GRPC_PORT);
  const own = parseEnv(ComputeEnvSchema, env);
  const addresses = own.SVC_COMPUTE_ORCHESTRATOR_ADDRESSES.split(",").map((a) => a.trim());
  const bad = addresses.find((a) => !ADDRESS.test(a));
  if (bad !== undefined) {
    throw configInvalid("SVC_COMPUTE_ORCHESTRATOR_ADDRESSES", `expected host:port, got ${JSON.stringify(bad)}`);
  }
  const accessKeyId = own.SVC_COMPONENTS_S3_ACCESS_KEY;
  const secretAccessKey = own.SVC_COMPONENTS_S3_SECRET_KEY;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw configInvalid("SVC_COMPONENTS_S3_SECRET_KEY", "SVC_COMPONENTS_S3_ACCESS_KEY and _SECRET_KEY go together");
  }
  return {
    replica,
    orchestratorAddresses: addresses,
    heartbeatMs: own.SVC_COMPUTE_HEARTBEAT_MS,
    capacityShards: own.SVC_COMPUTE_CAPACITY_SHARDS,
    pgUrl: own.SVC_COMPONENTS_PG_URL,
    schema: own.SVC_COMPONENTS_PG_SCHEMA,
    s3: {
      endpoint: own.SVC_COMPONENTS_S3_ENDPOINT,
      region: own.SVC_COMPONENTS_S3_REGION,
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
      bucket: own.SVC_COMPONENTS_S3_BUCKET,
      forcePathStyle: own.SVC_COMPONENTS_S3_FORCE_PATH_STYLE === "true",
    },
  };
}
