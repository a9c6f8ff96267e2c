import { type Static, Type } from "@sinclair/typebox";
import { configInvalid } from "./parse-env.ts";

/** The model's PostgreSQL: every component that keeps state spreads these into its own env schema. */
export const ModelStoreEnv = {
  SVC_COMPONENTS_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the model" }),
  SVC_COMPONENTS_PG_SCHEMA: Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$", default: "svc_components" }),
};

/** The bucket of shard objects (backend writes them, compute loads them). */
export const ShardObjectsEnv = {
  SVC_COMPONENTS_S3_ENDPOINT: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$" })),
  SVC_COMPONENTS_S3_REGION: Type.String({ minLength: 1, default: "us-east-1" }),
  SVC_COMPONENTS_S3_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_COMPONENTS_S3_BUCKET: Type.String({ minLength: 3, maxLength: 63, description: "bucket of shard objects" }),
  SVC_COMPONENTS_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
};

const ShardObjectsSchema = Type.Object(ShardObjectsEnv);

export interface S3Settings {
  endpoint: string | undefined;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  bucket: string;
  forcePathStyle: boolean;
}

/** The parsed `ShardObjectsEnv` fields as S3 settings; an access key without its secret (or the reverse) is refused. */
export function shardObjectsSettings(own: Static<typeof ShardObjectsSchema>): S3Settings {
  const accessKeyId = own.SVC_COMPONENTS_S3_ACCESS_KEY;
  const secretAccessKey = own.SVC_COMPONENTS_S3_SECRET_KEY;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw configInvalid("SVC_COMPONENTS_S3_SECRET_KEY", "SVC_COMPONENTS_S3_ACCESS_KEY and _SECRET_KEY go together");
  }
  return {
    endpoint: own.SVC_COMPONENTS_S3_ENDPOINT,
    region: own.SVC_COMPONENTS_S3_REGION,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    bucket: own.SVC_COMPONENTS_S3_BUCKET,
    forcePathStyle: own.SVC_COMPONENTS_S3_FORCE_PATH_STYLE === "true",
  };
}

const ADDRESS = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/;

/** A comma list of `host:port` (another component's replicas); a bad entry is refused naming `variable`. */
export function parseAddressList(variable: string, value: string): string[] {
  const addresses = value.split(",").map((a) => a.trim());
  const bad = addresses.find((a) => !ADDRESS.test(a));
  if (bad !== undefined) throw configInvalid(variable, `expected host:port, got ${JSON.stringify(bad)}`);
  return addresses;
}
