import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { LISTEN_HOST_PATTERN } from "@svc/common";
import { AgentError } from "./errors.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

const integer = (options: { minimum: number; maximum: number; default?: number; description: string }) =>
  Type.Integer(options);

/**
 * The agent's environment (spec: `audit-logagent`; storage design: docs/audit-storage.md, "Kafka"). Only the keys
 * below are read; any other variable is ignored. Integers are given in decimal.
 */
export const AgentEnvSchema = Type.Object({
  SVC_AGENT_SOURCE: Type.String({ minLength: 1, description: "JSONL file to tail, or `-` for standard input" }),
  SVC_AGENT_KAFKA_BROKERS: Type.String({
    pattern: "^[^,\\s:]+:\\d{1,5}(,[^,\\s:]+:\\d{1,5})*$",
    description: "bootstrap brokers, host:port[,host:port...]",
  }),
  SVC_AGENT_TOPIC: Type.String({
    pattern: "^[A-Za-z0-9._-]{1,249}$",
    default: "svc.audit.events.v1",
    description: "topic the records go to",
  }),
  SVC_AGENT_DLQ_TOPIC: Type.Optional(
    Type.String({ pattern: "^[A-Za-z0-9._-]{1,249}$", description: "dead-letter topic; default `<topic>.dlq`" }),
  ),
  SVC_AGENT_CHECKPOINT_FILE: Type.Optional(
    Type.String({ minLength: 1, description: "checkpoint file; required when the source is a file" }),
  ),
  SVC_AGENT_MAX_LINE_BYTES: integer({ minimum: 256, maximum: 1 * MiB, default: 64 * KiB, description: "longest line" }),
  // A whole batch may go to one partition (one tenant) as one record batch, which Kafka refuses above its
  // message.max.bytes (1 MiB by default) with MESSAGE_TOO_LARGE; records add about 10 % to the lines' bytes.
  SVC_AGENT_BATCH_BYTES: integer({
    minimum: 1 * KiB,
    maximum: 768 * KiB,
    default: 512 * KiB,
    description: "batch size",
  }),
  SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES: integer({
    minimum: 64 * KiB,
    maximum: 1024 * MiB,
    default: 1_048_588,
    description:
      "the topics' max.message.bytes (the broker's message.max.bytes, 1048588 by default, unless a topic sets its own)",
  }),
  SVC_AGENT_SEND_CONCURRENCY: integer({
    minimum: 1,
    maximum: 5,
    default: 4,
    description: "batches sent to Kafka at once (at most 5: the idempotent producer's limit)",
  }),
  SVC_AGENT_LINGER_MS: integer({ minimum: 0, maximum: 10_000, default: 5, description: "batch age" }),
  // 4 MiB covers every batch in flight (5 × 768 KiB at most) and one more being filled; more only holds lines (and
  // the client's copies of them) in memory longer: 16 MiB cost about 60 MiB of peak RSS and more CPU (collection).
  SVC_AGENT_MAX_IN_FLIGHT_BYTES: integer({
    minimum: 4 * KiB,
    maximum: 1024 * MiB,
    default: 4 * MiB,
    description: "bytes read and not yet acknowledged (the memory bound)",
  }),
  SVC_AGENT_POLL_MS: integer({ minimum: 5, maximum: 10_000, default: 100, description: "file poll at its end" }),
  SVC_AGENT_ROTATE_GRACE_MS: integer({
    minimum: 0,
    maximum: 60_000,
    default: 1_000,
    description: "how long a rotated file is still read while the new one stays empty",
  }),
  SVC_AGENT_KAFKA_TIMEOUT_MS: integer({ minimum: 100, maximum: 300_000, default: 10_000, description: "request" }),
  SVC_AGENT_SHUTDOWN_TIMEOUT_MS: integer({ minimum: 0, maximum: 600_000, default: 20_000, description: "drain" }),
  SVC_AGENT_STOP_READ_MS: integer({
    minimum: 0,
    maximum: 600_000,
    default: 0,
    description: "on a stop, how long the file is still read until nothing is left unread (0: not at all)",
  }),
  SVC_AGENT_METRICS_PORT: Type.Optional(
    integer({ minimum: 0, maximum: 65_535, description: "port of /metrics and /health; unset = not served" }),
  ),
  SVC_AGENT_METRICS_HOST: Type.String({
    pattern: LISTEN_HOST_PATTERN,
    default: "127.0.0.1",
    description: "metrics address",
  }),
  SVC_AGENT_CLIENT_ID: Type.String({ pattern: "^[A-Za-z0-9._-]{1,128}$", default: "svc-audit-logagent" }),
  SVC_AGENT_LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
    { default: "info" },
  ),
});

export type AgentEnv = Static<typeof AgentEnvSchema>;

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface AgentConfig {
  /** A file path, or `-` for standard input. */
  source: string;
  brokers: string[];
  topic: string;
  dlqTopic: string;
  /** Undefined for standard input (no checkpoint: a pipe cannot be re-read). */
  checkpointFile: string | undefined;
  maxLineBytes: number;
  batchBytes: number;
  sendConcurrency: number;
  lingerMs: number;
  maxInFlightBytes: number;
  pollMs: number;
  rotateGraceMs: number;
  kafkaTimeoutMs: number;
  shutdownTimeoutMs: number;
  /**
   * On a stop, keep reading the file (and the generations rotated before it) until nothing is left unread, for at
   * most this long, before the drain: a sidecar whose writer has already exited and whose volume goes with the Pod
   * (0: stop reading at once; what is unread is read at the next start).
   */
  stopReadMs: number;
  /** Undefined: no metrics listener. 0: an ephemeral port (tests). */
  metricsPort: number | undefined;
  metricsHost: string;
  clientId: string;
  logLevel: LogLevel;
}

function invalid(field: string, message: string): AgentError {
  return new AgentError("AGENT_CONFIG_INVALID", `${field}: ${message}`, { subject: field });
}

function firstError(schema: TSchema, value: unknown): AgentError | undefined {
  const first = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const field = first.path.replace(/^\//, "").split("/")[0] ?? "";
  return invalid(field, `${first.message} (got ${JSON.stringify(first.value)})`);
}

/** Parses the agent's settings from `env` (the caller passes `process.env`); throws `AGENT_CONFIG_INVALID`. */
export function parseAgentConfig(env: Record<string, string | undefined>): AgentConfig {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(AgentEnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  for (const [key, schema] of Object.entries(AgentEnvSchema.properties)) {
    const raw = picked[key];
    if (typeof raw !== "string") continue;
    if (schema.type === "integer") {
      if (!/^\d+$/.test(raw)) throw invalid(key, `expected a decimal integer (got ${JSON.stringify(raw)})`);
      picked[key] = Number(raw);
    }
  }
  const withDefaults = Value.Default(AgentEnvSchema, picked);
  const error = firstError(AgentEnvSchema, withDefaults);
  if (error) throw error;
  const parsed = withDefaults as AgentEnv;

  const stdin = parsed.SVC_AGENT_SOURCE === "-";
  if (!stdin && parsed.SVC_AGENT_CHECKPOINT_FILE === undefined) {
    throw invalid("SVC_AGENT_CHECKPOINT_FILE", "required when SVC_AGENT_SOURCE is a file");
  }
  if (!stdin && parsed.SVC_AGENT_CHECKPOINT_FILE === parsed.SVC_AGENT_SOURCE) {
    throw invalid("SVC_AGENT_CHECKPOINT_FILE", "must not be the source file");
  }
  if (parsed.SVC_AGENT_MAX_IN_FLIGHT_BYTES < parsed.SVC_AGENT_BATCH_BYTES + parsed.SVC_AGENT_MAX_LINE_BYTES) {
    throw invalid(
      "SVC_AGENT_MAX_IN_FLIGHT_BYTES",
      `must be at least SVC_AGENT_BATCH_BYTES + SVC_AGENT_MAX_LINE_BYTES (${parsed.SVC_AGENT_BATCH_BYTES + parsed.SVC_AGENT_MAX_LINE_BYTES})`,
    );
  }
  // One tenant's batch is one record batch: it closes past SVC_AGENT_BATCH_BYTES by at most one line (and a dead
  // letter's headers), and records add about 10 % of framing. A larger one is refused for good (MESSAGE_TOO_LARGE).
  const largestBatch = Math.ceil((parsed.SVC_AGENT_BATCH_BYTES + parsed.SVC_AGENT_MAX_LINE_BYTES) * 1.1) + 4 * KiB;
  if (largestBatch > parsed.SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES) {
    throw invalid(
      "SVC_AGENT_BATCH_BYTES",
      `with SVC_AGENT_MAX_LINE_BYTES a batch reaches ${largestBatch} bytes on the wire, more than SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES (${parsed.SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES}) lets Kafka take: lower either, or raise the topics' max.message.bytes and that setting`,
    );
  }
  const dlqTopic = parsed.SVC_AGENT_DLQ_TOPIC ?? `${parsed.SVC_AGENT_TOPIC}.dlq`;
  if (dlqTopic === parsed.SVC_AGENT_TOPIC) throw invalid("SVC_AGENT_DLQ_TOPIC", "must differ from SVC_AGENT_TOPIC");

  return {
    source: parsed.SVC_AGENT_SOURCE,
    brokers: parsed.SVC_AGENT_KAFKA_BROKERS.split(","),
    topic: parsed.SVC_AGENT_TOPIC,
    dlqTopic,
    checkpointFile: stdin ? undefined : parsed.SVC_AGENT_CHECKPOINT_FILE,
    maxLineBytes: parsed.SVC_AGENT_MAX_LINE_BYTES,
    batchBytes: parsed.SVC_AGENT_BATCH_BYTES,
    sendConcurrency: parsed.SVC_AGENT_SEND_CONCURRENCY,
    lingerMs: parsed.SVC_AGENT_LINGER_MS,
    maxInFlightBytes: parsed.SVC_AGENT_MAX_IN_FLIGHT_BYTES,
    pollMs: parsed.SVC_AGENT_POLL_MS,
    rotateGraceMs: parsed.SVC_AGENT_ROTATE_GRACE_MS,
    kafkaTimeoutMs: parsed.SVC_AGENT_KAFKA_TIMEOUT_MS,
    shutdownTimeoutMs: parsed.SVC_AGENT_SHUTDOWN_TIMEOUT_MS,
    stopReadMs: parsed.SVC_AGENT_STOP_READ_MS,
    metricsPort: parsed.SVC_AGENT_METRICS_PORT,
    metricsHost: parsed.SVC_AGENT_METRICS_HOST,
    clientId: parsed.SVC_AGENT_CLIENT_ID,
    logLevel: parsed.SVC_AGENT_LOG_LEVEL as LogLevel,
  };
}
