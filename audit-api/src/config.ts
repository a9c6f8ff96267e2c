import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type AuthConfig, parseAuthConfig } from "@svc/auth";
import { LISTEN_HOST_PATTERN } from "@svc/common";
import { AuditApiError } from "./errors.ts";
import type { TailSettings } from "./kafka-tail.ts";

const IDENTIFIER = "^[a-z_][a-z0-9_]{0,62}$";

const integer = (options: { minimum: number; maximum: number; default?: number; description: string }) =>
  Type.Integer(options);

/**
 * The audit API's environment (spec: Endpoints → Audit service, Limits; storage: docs/audit-storage.md). The index
 * and S3 settings have the same names as the writer's (queue-consumer), so one deployment shares them. Only the
 * keys below are read (plus `SVC_AUTH_*`, parsed by @svc/auth); integers are decimal.
 */
export const AuditApiEnvSchema = Type.Object({
  SVC_AUDIT_HOST_PORT: integer({ minimum: 0, maximum: 65_535, default: 50_052, description: "gRPC port (spec)" }),
  SVC_AUDIT_GRPC_HOST: Type.String({ pattern: LISTEN_HOST_PATTERN, default: "0.0.0.0", description: "gRPC address" }),
  SVC_AUDIT_REST_PORT: integer({ minimum: 0, maximum: 65_535, default: 8052, description: "REST + health port" }),
  SVC_AUDIT_REST_HOST: Type.String({ pattern: LISTEN_HOST_PATTERN, default: "0.0.0.0", description: "REST address" }),
  SVC_AUDIT_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the index" }),
  SVC_AUDIT_PG_POOL: integer({ minimum: 1, maximum: 100, default: 8, description: "connections" }),
  SVC_AUDIT_INDEX_SCHEMA: Type.String({ pattern: IDENTIFIER, default: "audit", description: "index schema" }),
  SVC_AUDIT_S3_ENDPOINT: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$", description: "S3 endpoint URL" })),
  SVC_AUDIT_S3_REGION: Type.String({ minLength: 1, default: "us-east-1" }),
  SVC_AUDIT_S3_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_AUDIT_S3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_AUDIT_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
  SVC_AUDIT_API_PAGE_TOKEN_KEY: Type.String({
    minLength: 32,
    description: "HMAC key of page tokens (at least 32 characters; the same on every replica)",
  }),
  SVC_AUDIT_API_DEFAULT_PAGE_SIZE: integer({ minimum: 1, maximum: 10_000, default: 100, description: "page" }),
  SVC_AUDIT_API_MAX_PAGE_SIZE: integer({ minimum: 1, maximum: 10_000, default: 1_000, description: "largest page" }),
  SVC_AUDIT_API_MAX_EXPORT_EVENTS: integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description: "largest unary export, in events",
  }),
  SVC_AUDIT_API_MAX_EXPORT_BYTES: integer({
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
    default: 4_000_000,
    description: "largest unary export, in bytes of JSONL (grpc clients receive 4 MiB by default)",
  }),
  SVC_AUDIT_API_RANGE_MERGE_BYTES: integer({
    minimum: 0,
    maximum: 16 * 1024 * 1024,
    default: 65_536,
    description: "byte ranges of one object closer than this are fetched in one GET",
  }),
  SVC_AUDIT_API_OBJECT_CACHE_BYTES: integer({
    minimum: 0,
    maximum: 64 * 1024 * 1024 * 1024,
    default: 64 * 1024 * 1024,
    description: "memory for blocks of stored objects that lists read (0: every page is a GET)",
  }),
  SVC_AUDIT_API_DISK_CACHE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description: "a directory of this process for blocks that do not fit in memory (unset: memory only)",
    }),
  ),
  SVC_AUDIT_API_DISK_CACHE_BYTES: integer({
    minimum: 1024 * 1024,
    // 512k slots: the slot map (~100 bytes a slot) stays within ~50 MB and the start-up scan of their headers short.
    maximum: 64 * 1024 * 1024 * 1024,
    default: 1024 * 1024 * 1024,
    description: "disk for blocks in SVC_AUDIT_API_DISK_CACHE_DIR (at most 64 GiB)",
  }),
  SVC_AUDIT_KAFKA_BROKERS: Type.Optional(
    Type.String({
      pattern: "^[^\\s,]+:\\d+(,[^\\s,]+:\\d+)*$",
      description: "host:port,… of Kafka: the freshness tail reads the topic (unset: answers from the index only)",
    }),
  ),
  SVC_AUDIT_TOPIC: Type.String({
    pattern: "^[A-Za-z0-9._-]{1,249}$",
    default: "svc.audit.events.v1",
    description: "the audit topic (the writer's)",
  }),
  SVC_AUDIT_API_TAIL_MAX_RECORDS: integer({
    minimum: 1,
    maximum: 100_000_000,
    default: 1_000_000,
    description: "records the freshness tail holds at most",
  }),
  SVC_AUDIT_API_TAIL_REFRESH_MS: integer({
    minimum: 10,
    maximum: 60_000,
    default: 500,
    description: "how often the tail reads marks.indexed_through",
  }),
  SVC_AUDIT_LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
    { default: "info" },
  ),
});

export type AuditApiEnv = Static<typeof AuditApiEnvSchema>;
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface S3Settings {
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
}

export interface QueryLimits {
  defaultPageSize: number;
  maxPageSize: number;
  maxExportEvents: number;
  maxExportBytes: number;
  rangeMergeBytes: number;
}

export interface AuditApiConfig {
  grpcPort: number;
  grpcHost: string;
  restPort: number;
  restHost: string;
  pgUrl: string;
  pgPool: number;
  schema: string;
  s3: S3Settings;
  pageTokenKey: string;
  limits: QueryLimits;
  /** Bytes of object blocks kept for lists (block-cache.ts); 0 = none. */
  objectCacheBytes: number;
  /** The disk tier behind that memory (disk-blocks.ts); undefined without SVC_AUDIT_API_DISK_CACHE_DIR. */
  diskCache: { dir: string; maxBytes: number } | undefined;
  logLevel: LogLevel;
  auth: AuthConfig;
  /** The freshness tail; undefined without SVC_AUDIT_KAFKA_BROKERS. */
  tail: TailSettings | undefined;
}

function invalid(field: string, message: string): AuditApiError {
  return new AuditApiError("AUDIT_API_CONFIG_INVALID", `${field}: ${message}`, { subject: field });
}

function firstError(schema: TSchema, value: unknown): AuditApiError | undefined {
  const first = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const field = first.path.replace(/^\//, "").split("/")[0] ?? "";
  // A secret's value is never printed.
  const shown = field.endsWith("_KEY") ? "" : ` (got ${JSON.stringify(first.value)})`;
  return invalid(field, `${first.message}${shown}`);
}

/** Parses the audit API's settings from `env` (main passes `process.env`); throws `AUDIT_API_CONFIG_INVALID`. */
export function parseAuditApiConfig(env: Record<string, string | undefined>): AuditApiConfig {
  const picked: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(AuditApiEnvSchema.properties)) {
    const raw = env[key];
    if (raw === undefined || raw === "") continue;
    if ((schema as TSchema).type === "integer") {
      if (!/^\d+$/.test(raw)) throw invalid(key, `expected a decimal integer (got ${JSON.stringify(raw)})`);
      picked[key] = Number(raw);
    } else {
      picked[key] = raw;
    }
  }
  const withDefaults = Value.Default(AuditApiEnvSchema, picked);
  const error = firstError(AuditApiEnvSchema, withDefaults);
  if (error) throw error;
  const parsed = withDefaults as AuditApiEnv;
  if (parsed.SVC_AUDIT_API_DEFAULT_PAGE_SIZE > parsed.SVC_AUDIT_API_MAX_PAGE_SIZE) {
    throw invalid("SVC_AUDIT_API_DEFAULT_PAGE_SIZE", "must not exceed SVC_AUDIT_API_MAX_PAGE_SIZE");
  }
  if ((parsed.SVC_AUDIT_S3_ACCESS_KEY === undefined) !== (parsed.SVC_AUDIT_S3_SECRET_KEY === undefined)) {
    throw invalid("SVC_AUDIT_S3_SECRET_KEY", "SVC_AUDIT_S3_ACCESS_KEY and SVC_AUDIT_S3_SECRET_KEY go together");
  }
  if (parsed.SVC_AUDIT_API_DISK_CACHE_DIR !== undefined && parsed.SVC_AUDIT_API_OBJECT_CACHE_BYTES === 0) {
    throw invalid(
      "SVC_AUDIT_API_DISK_CACHE_DIR",
      "the disk tier is behind the memory cache: it needs SVC_AUDIT_API_OBJECT_CACHE_BYTES > 0",
    );
  }
  let auth: AuthConfig;
  try {
    auth = parseAuthConfig(env);
  } catch (cause) {
    const subject = (cause as { subject?: string }).subject ?? "SVC_AUTH";
    throw new AuditApiError("AUDIT_API_CONFIG_INVALID", (cause as Error).message, { subject, cause });
  }
  return {
    grpcPort: parsed.SVC_AUDIT_HOST_PORT,
    grpcHost: parsed.SVC_AUDIT_GRPC_HOST,
    restPort: parsed.SVC_AUDIT_REST_PORT,
    restHost: parsed.SVC_AUDIT_REST_HOST,
    pgUrl: parsed.SVC_AUDIT_PG_URL,
    pgPool: parsed.SVC_AUDIT_PG_POOL,
    schema: parsed.SVC_AUDIT_INDEX_SCHEMA,
    s3: {
      endpoint: parsed.SVC_AUDIT_S3_ENDPOINT,
      region: parsed.SVC_AUDIT_S3_REGION,
      accessKeyId: parsed.SVC_AUDIT_S3_ACCESS_KEY,
      secretAccessKey: parsed.SVC_AUDIT_S3_SECRET_KEY,
      forcePathStyle: parsed.SVC_AUDIT_S3_FORCE_PATH_STYLE === "true",
    },
    pageTokenKey: parsed.SVC_AUDIT_API_PAGE_TOKEN_KEY,
    limits: {
      defaultPageSize: parsed.SVC_AUDIT_API_DEFAULT_PAGE_SIZE,
      maxPageSize: parsed.SVC_AUDIT_API_MAX_PAGE_SIZE,
      maxExportEvents: parsed.SVC_AUDIT_API_MAX_EXPORT_EVENTS,
      maxExportBytes: parsed.SVC_AUDIT_API_MAX_EXPORT_BYTES,
      rangeMergeBytes: parsed.SVC_AUDIT_API_RANGE_MERGE_BYTES,
    },
    objectCacheBytes: parsed.SVC_AUDIT_API_OBJECT_CACHE_BYTES,
    diskCache:
      parsed.SVC_AUDIT_API_DISK_CACHE_DIR === undefined
        ? undefined
        : { dir: parsed.SVC_AUDIT_API_DISK_CACHE_DIR, maxBytes: parsed.SVC_AUDIT_API_DISK_CACHE_BYTES },
    logLevel: parsed.SVC_AUDIT_LOG_LEVEL as LogLevel,
    auth,
    tail: parsed.SVC_AUDIT_KAFKA_BROKERS
      ? {
          brokers: parsed.SVC_AUDIT_KAFKA_BROKERS.split(","),
          topic: parsed.SVC_AUDIT_TOPIC,
          maxRecords: parsed.SVC_AUDIT_API_TAIL_MAX_RECORDS,
          refreshMs: parsed.SVC_AUDIT_API_TAIL_REFRESH_MS,
        }
      : undefined,
  };
}
