import { tmpdir } from "node:os";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { isLoopbackHost, LISTEN_HOST_PATTERN } from "@svc/common";
import { QueueConsumerError } from "./errors.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

const TOPIC = "^[A-Za-z0-9._-]{1,249}$";
/** A PostgreSQL identifier we can quote safely and that needs no quoting to read. */
const IDENTIFIER = "^[a-z_][a-z0-9_]{0,62}$";
/** Bucket names (S3 rules, simplified: lower case, digits, dots and dashes). */
const BUCKET = "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$";

const integer = (options: { minimum: number; maximum: number; default?: number; description: string }) =>
  Type.Integer(options);

/**
 * `auto`: unsigned over TLS (AWS's endpoints when none is set), as AWS's SDKs do by default, and to a loopback
 * address, where the body never leaves the host; signed over plain http to another host, where only the signature
 * would catch a body changed on the way.
 */
function payloadSigning(setting: string, endpoint: string | undefined): "signed" | "unsigned" {
  if (setting === "signed" || setting === "unsigned") return setting;
  if (endpoint === undefined) return "unsigned";
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw invalid("SVC_AUDIT_S3_ENDPOINT", `not a URL (got ${JSON.stringify(endpoint)})`);
  }
  return url.protocol === "https:" || isLoopbackHost(url.hostname) ? "unsigned" : "signed";
}

/** The default of SVC_AUDIT_MAX_BUFFERED_BYTES, in batches (`SVC_AUDIT_BATCH_MAX_BYTES`). */
const BUFFERED_BATCHES = 6;

/**
 * The writer half of the `audit` service (docs/audit-storage.md, "Objects" and "Index"). Only the keys below are
 * read; any other variable is ignored. Integers are given in decimal. `SVC_AUDIT_RETENTION_DAYS` is the spec's name.
 */
export const QueueConsumerEnvSchema = Type.Object({
  SVC_AUDIT_KAFKA_BROKERS: Type.String({
    pattern: "^[^,\\s:]+:\\d{1,5}(,[^,\\s:]+:\\d{1,5})*$",
    description: "bootstrap brokers, host:port[,host:port...]",
  }),
  SVC_AUDIT_TOPIC: Type.String({ pattern: TOPIC, default: "svc.audit.events.v1", description: "topic read" }),
  SVC_AUDIT_GROUP_ID: Type.String({ pattern: TOPIC, default: "svc-audit-writer", description: "consumer group" }),
  SVC_AUDIT_CLIENT_ID: Type.String({ pattern: "^[A-Za-z0-9._-]{1,128}$", default: "svc-audit-writer" }),
  SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: integer({
    minimum: 6_000,
    maximum: 300_000,
    default: 30_000,
    description: "group session timeout: how long a dead replica keeps its partitions",
  }),
  SVC_AUDIT_BUCKET: Type.String({ pattern: BUCKET, default: "svc-audit", description: "Object Lock bucket" }),
  SVC_AUDIT_KEY_PREFIX: Type.String({
    pattern: "^([A-Za-z0-9._-]+/)*$",
    default: "",
    description: "key prefix, empty or ending in `/`",
  }),
  SVC_AUDIT_S3_ENDPOINT: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$", description: "S3 endpoint URL" })),
  // A region name as S3-compatible stores spell theirs (`us-east-1`, `auto`, `fr-par`, `nyc3`): it is signed into
  // every request, so a typo is refused here rather than answered with a signature error.
  SVC_AUDIT_S3_REGION: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", default: "us-east-1" }),
  SVC_AUDIT_S3_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_AUDIT_S3_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SVC_AUDIT_S3_FORCE_PATH_STYLE: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
  SVC_AUDIT_S3_PAYLOAD_SIGNING: Type.Union([Type.Literal("auto"), Type.Literal("signed"), Type.Literal("unsigned")], {
    default: "auto",
    description: "SHA-256 of each PUT body in its signature: auto = only over http to another host",
  }),
  SVC_AUDIT_RETENTION_DAYS: integer({ minimum: 1, maximum: 36_500, description: "Object Lock retention (days)" }),
  SVC_AUDIT_OBJECT_COMPRESSION: Type.Union([Type.Literal("none"), Type.Literal("gzip")], { default: "none" }),
  SVC_AUDIT_BATCH_MAX_BYTES: integer({
    minimum: 1 * KiB,
    maximum: 1024 * MiB,
    default: 16 * MiB,
    description: "batch size",
  }),
  SVC_AUDIT_BATCH_MAX_RECORDS: integer({
    minimum: 1,
    maximum: 10_000_000,
    default: 100_000,
    description: "records per batch",
  }),
  SVC_AUDIT_BATCH_MAX_AGE_MS: integer({ minimum: 10, maximum: 3_600_000, default: 9_000, description: "batch age" }),
  SVC_AUDIT_MAX_BUFFERED_BYTES: Type.Optional(
    integer({
      minimum: 2 * KiB,
      maximum: 8192 * MiB,
      description: `bytes read and not yet written; default ${BUFFERED_BATCHES} × batch`,
    }),
  ),
  SVC_AUDIT_BATCH_SPOOL: Type.Union([Type.Literal("file"), Type.Literal("memory")], {
    default: "file",
    description: "where open and waiting batches are kept: spool files (page cache) or the heap",
  }),
  SVC_AUDIT_SPOOL_DIR: Type.String({
    pattern: "^/",
    default: tmpdir(),
    description: "absolute directory of the spool files (one subdirectory per writer)",
  }),
  SVC_AUDIT_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the index" }),
  SVC_AUDIT_PG_POOL: integer({ minimum: 1, maximum: 100, default: 4, description: "connections" }),
  SVC_AUDIT_WRITE_CONCURRENCY: integer({
    minimum: 1,
    maximum: 64,
    default: 2,
    description: "batches written at once over all partitions (index fields, PUT, index, commit)",
  }),
  SVC_AUDIT_INDEX_SCHEMA: Type.String({ pattern: IDENTIFIER, default: "audit", description: "index schema" }),
  SVC_AUDIT_RETRY_MAX_MS: integer({ minimum: 10, maximum: 600_000, default: 30_000, description: "longest backoff" }),
  // At least a second: the drain writes every open batch (a PUT and an index transaction each); at 0 the stop would
  // time out before its first write and every batch be read again by the next owner.
  SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: integer({ minimum: 1_000, maximum: 600_000, default: 25_000, description: "drain" }),
  SVC_AUDIT_S3_PUT_TIMEOUT_MS: integer({
    minimum: 100,
    maximum: 3_600_000,
    default: 60_000,
    description: "a PUT without a whole answer within this is aborted and retried",
  }),
  SVC_AUDIT_METRICS_PORT: Type.Optional(
    integer({ minimum: 0, maximum: 65_535, description: "port of /metrics and /health; unset = not served" }),
  ),
  SVC_AUDIT_METRICS_HOST: Type.String({
    pattern: LISTEN_HOST_PATTERN,
    default: "127.0.0.1",
    description: "metrics address",
  }),
  SVC_AUDIT_LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
    { default: "info" },
  ),
});

export type QueueConsumerEnv = Static<typeof QueueConsumerEnvSchema>;

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface S3Settings {
  /** Undefined: the SDK's default (AWS). */
  endpoint: string | undefined;
  region: string;
  /** Undefined: the SDK's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
  /**
   * Whether a PUT's signature covers its body's SHA-256 (`signed`) or says `UNSIGNED-PAYLOAD`: the body is then
   * guarded by its signed CRC-32 header, which S3 checks, and in transit by TLS (queue-consumer/README.md).
   */
  payloadSigning: "signed" | "unsigned";
}

export interface BatchLimits {
  maxBytes: number;
  maxRecords: number;
  maxAgeMs: number;
}

export interface QueueConsumerConfig {
  brokers: string[];
  topic: string;
  groupId: string;
  clientId: string;
  sessionTimeoutMs: number;
  bucket: string;
  keyPrefix: string;
  s3: S3Settings;
  retentionDays: number;
  compression: "none" | "gzip";
  batch: BatchLimits;
  /** Bytes read from Kafka and not yet written; above it the stream pauses. */
  maxBufferedBytes: number;
  /** Directory under which batches are spooled to files; undefined: they are kept in the heap. */
  spoolDir: string | undefined;
  pgUrl: string;
  pgPool: number;
  /** Batches written at once over all partitions; each holds its parsed index fields and SQL arrays meanwhile. */
  writeConcurrency: number;
  indexSchema: string;
  retryMaxMs: number;
  shutdownTimeoutMs: number;
  /** A PUT without a whole answer within this many ms is aborted and retried (a server that accepts and never answers). */
  putTimeoutMs: number;
  /** Undefined: no metrics listener. 0: an ephemeral port (tests). */
  metricsPort: number | undefined;
  metricsHost: string;
  logLevel: LogLevel;
}

function invalid(field: string, message: string): QueueConsumerError {
  return new QueueConsumerError("QUEUE_CONSUMER_CONFIG_INVALID", `${field}: ${message}`, { subject: field });
}

function firstError(schema: TSchema, value: unknown): QueueConsumerError | undefined {
  const first = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const field = first.path.replace(/^\//, "").split("/")[0] ?? "";
  const got = first.value === undefined ? "unset" : `got ${JSON.stringify(first.value)}`;
  return invalid(field, `${first.message} (${got})`);
}

/** Parses the consumer's settings from `env` (the caller passes `process.env`); throws `QUEUE_CONSUMER_CONFIG_INVALID`. */
export function parseQueueConsumerConfig(env: Record<string, string | undefined>): QueueConsumerConfig {
  const picked: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(QueueConsumerEnvSchema.properties)) {
    const raw = env[key];
    if (raw === undefined || (raw === "" && key !== "SVC_AUDIT_KEY_PREFIX")) continue;
    if (schema.type === "integer") {
      if (!/^\d+$/.test(raw)) throw invalid(key, `expected a decimal integer (got ${JSON.stringify(raw)})`);
      picked[key] = Number(raw);
    } else {
      picked[key] = raw;
    }
  }
  const withDefaults = Value.Default(QueueConsumerEnvSchema, picked);
  const error = firstError(QueueConsumerEnvSchema, withDefaults);
  if (error) throw error;
  const parsed = withDefaults as QueueConsumerEnv;

  const accessKey = parsed.SVC_AUDIT_S3_ACCESS_KEY;
  const secretKey = parsed.SVC_AUDIT_S3_SECRET_KEY;
  if ((accessKey === undefined) !== (secretKey === undefined)) {
    throw invalid(
      accessKey === undefined ? "SVC_AUDIT_S3_ACCESS_KEY" : "SVC_AUDIT_S3_SECRET_KEY",
      "set both or neither",
    );
  }
  // Room for every partition's open batch to reach its age at the expected rate plus the batches being written: at
  // 4 × 8 MiB, 10k events/s over 6 partitions filled the buffer in 8 s, so every batch was sealed before its age
  // (722 objects per partition per hour at a 9 s age, against the goal of 360).
  const maxBufferedBytes = parsed.SVC_AUDIT_MAX_BUFFERED_BYTES ?? BUFFERED_BATCHES * parsed.SVC_AUDIT_BATCH_MAX_BYTES;
  if (maxBufferedBytes < 2 * parsed.SVC_AUDIT_BATCH_MAX_BYTES) {
    throw invalid(
      "SVC_AUDIT_MAX_BUFFERED_BYTES",
      `must be at least 2 × SVC_AUDIT_BATCH_MAX_BYTES (${2 * parsed.SVC_AUDIT_BATCH_MAX_BYTES})`,
    );
  }

  return {
    brokers: parsed.SVC_AUDIT_KAFKA_BROKERS.split(","),
    topic: parsed.SVC_AUDIT_TOPIC,
    groupId: parsed.SVC_AUDIT_GROUP_ID,
    clientId: parsed.SVC_AUDIT_CLIENT_ID,
    sessionTimeoutMs: parsed.SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS,
    bucket: parsed.SVC_AUDIT_BUCKET,
    keyPrefix: parsed.SVC_AUDIT_KEY_PREFIX,
    s3: {
      endpoint: parsed.SVC_AUDIT_S3_ENDPOINT,
      region: parsed.SVC_AUDIT_S3_REGION,
      credentials:
        accessKey !== undefined && secretKey !== undefined
          ? { accessKeyId: accessKey, secretAccessKey: secretKey }
          : undefined,
      forcePathStyle: parsed.SVC_AUDIT_S3_FORCE_PATH_STYLE === "true",
      payloadSigning: payloadSigning(parsed.SVC_AUDIT_S3_PAYLOAD_SIGNING, parsed.SVC_AUDIT_S3_ENDPOINT),
    },
    retentionDays: parsed.SVC_AUDIT_RETENTION_DAYS,
    compression: parsed.SVC_AUDIT_OBJECT_COMPRESSION as "none" | "gzip",
    batch: {
      maxBytes: parsed.SVC_AUDIT_BATCH_MAX_BYTES,
      maxRecords: parsed.SVC_AUDIT_BATCH_MAX_RECORDS,
      maxAgeMs: parsed.SVC_AUDIT_BATCH_MAX_AGE_MS,
    },
    maxBufferedBytes,
    spoolDir: parsed.SVC_AUDIT_BATCH_SPOOL === "file" ? parsed.SVC_AUDIT_SPOOL_DIR : undefined,
    pgUrl: parsed.SVC_AUDIT_PG_URL,
    pgPool: parsed.SVC_AUDIT_PG_POOL,
    writeConcurrency: parsed.SVC_AUDIT_WRITE_CONCURRENCY,
    indexSchema: parsed.SVC_AUDIT_INDEX_SCHEMA,
    retryMaxMs: parsed.SVC_AUDIT_RETRY_MAX_MS,
    shutdownTimeoutMs: parsed.SVC_AUDIT_SHUTDOWN_TIMEOUT_MS,
    putTimeoutMs: parsed.SVC_AUDIT_S3_PUT_TIMEOUT_MS,
    metricsPort: parsed.SVC_AUDIT_METRICS_PORT,
    metricsHost: parsed.SVC_AUDIT_METRICS_HOST,
    logLevel: parsed.SVC_AUDIT_LOG_LEVEL as LogLevel,
  };
}
