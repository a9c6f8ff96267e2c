import { type AuditRecord, encodeRecord } from "@svc/audit-record";
import { type Logger, pino } from "pino";
import { boundRecord } from "./bound-record.ts";
import { EMITTER_DEFAULTS, EMITTER_LIMITS, type EmitterConfig, type FailMode, withinLimits } from "./config.ts";
import { AuditEmitterError } from "./errors.ts";
import { FileTarget } from "./file-target.ts";
import { JsonlSink } from "./jsonl-sink.ts";
import { KMS_EVENT_ACTIONS, type KmsEventKind } from "./kms-events.ts";
import { redactValue, sanitizeAttributes } from "./redact.ts";
import type { SinkTarget } from "./sink-target.ts";
import { stdoutTarget } from "./stream-target.ts";

/** The fields of one record before the emitter adds `id` and `source`, redacts, cuts and validates them. */
export interface RecordInput {
  /** Start of the call or event. */
  time: Date;
  action: string;
  resource: string;
  result: string;
  duration_ms: number;
  claimed_tenant_id: string;
  principal_id: string;
  tenant_id: string;
  attributes?: Readonly<Record<string, unknown>>;
}

/** What a non-call event may carry; everything is optional (`result` defaults to `ok`, `time` to now). */
export interface EventFields {
  resource?: string;
  result?: string;
  principal_id?: string;
  tenant_id?: string;
  claimed_tenant_id?: string;
  duration_ms?: number;
  attributes?: Readonly<Record<string, string>>;
  time?: Date;
}

export interface EmitterStats {
  /** Records the target accepted. */
  recordsWritten: number;
  /** Records lost to a failed write, a full buffer or a closed sink. */
  recordsFailed: number;
  /** Of `recordsFailed`: refused because `maxBufferedBytes` were waiting. */
  bufferFull: number;
  /** Records that failed schema validation (not written). */
  recordsInvalid: number;
  /** Attributes dropped for a sensitive or malformed name, or to fit a record in `maxRecordBytes`. */
  attributesDropped: number;
  /** Records written with their attributes cut to fit in `maxRecordBytes` (`truncated: "attributes"`). */
  recordsTruncated: number;
  /** Values replaced with `[redacted]`. */
  valuesRedacted: number;
  /** Bytes queued for the target right now. */
  bufferedBytes: number;
}

export interface AuditEmitter {
  readonly source: string;
  readonly failMode: FailMode;
  /** `false` from a failed write until the next successful one (fail-closed refuses calls up front meanwhile). */
  readonly healthy: boolean;
  /**
   * Builds, redacts, validates and queues one record. Fail-open: returns `undefined` at once (a failure is counted
   * and logged, never thrown). Fail-closed: returns a promise that resolves once the record is written and rejects
   * with `AuditEmitterError` when it cannot be. The gRPC interceptor calls this; services call `record`.
   */
  write(input: RecordInput): Promise<void> | undefined;
  /**
   * One non-call event of a stable kind (spec: Events → Audited kinds). Fail-open: resolves once written or
   * counted as failed; fail-closed: rejects with `AuditEmitterError` when it was not written.
   */
  record(kind: KmsEventKind, fields?: EventFields): Promise<void>;
  stats(): EmitterStats;
  /** Resolves when every record queued so far is written (or failed). */
  flush(): Promise<void>;
  /** Reopens the file by its path before the next write (wire to SIGHUP when a rotator asks for it). */
  reopen(): void;
  /** Refuses new records, writes the queued ones, closes the file. */
  close(): Promise<void>;
}

export interface AuditEmitterOptions {
  /** JSON logs; by default pino on stderr (stdout may be the audit log itself). */
  logger?: Logger;
  /** Overrides the target the config names (a service that hands over its own stream). */
  target?: SinkTarget;
}

/** Schema bounds of `@svc/audit-record`; values are cut to them rather than failing the record. */
const MAX = { action: 256, resource: 1024, result: 64, identity: 256 } as const;

function targetFor(config: EmitterConfig, logger: Logger): SinkTarget {
  if (config.sink !== "file" || !config.file) return stdoutTarget();
  const rotation = config.rotate && {
    bytes: withinLimits("SVC_AUDIT_LOG_ROTATE_BYTES", config.rotate.bytes, EMITTER_LIMITS.rotateBytes),
    keep: withinLimits("SVC_AUDIT_LOG_ROTATE_KEEP", config.rotate.keep, EMITTER_LIMITS.rotateKeep),
  };
  return new FileTarget(config.file, config.fsync, rotation, (error) =>
    logger.warn({ err: error }, "audit log rotation failed; writing on in the same file, tried again next batch"),
  );
}

/** Creates the emitter of one component: one sink, one counter set, one fail mode. */
export function createAuditEmitter(config: EmitterConfig, options: AuditEmitterOptions = {}): AuditEmitter {
  // `loadEmitterConfig` refuses a bad value; the same check catches a config built by hand
  const maxRecordBytes = withinLimits(
    "SVC_AUDIT_LOG_MAX_RECORD_BYTES",
    config.maxRecordBytes ?? EMITTER_DEFAULTS.maxRecordBytes,
    EMITTER_LIMITS.maxRecordBytes,
  );
  const logger = (options.logger ?? pino({ level: "info" }, pino.destination({ dest: 2, sync: true }))).child({
    component: "audit-emitter",
  });
  const sink = new JsonlSink(options.target ?? targetFor(config, logger), config.maxBufferedBytes);
  const counters = {
    recordsWritten: 0,
    recordsFailed: 0,
    bufferFull: 0,
    recordsInvalid: 0,
    attributesDropped: 0,
    recordsTruncated: 0,
    valuesRedacted: 0,
  };
  let healthy = true;
  let warnedTruncated = false;
  let lastLogged: unknown;

  /** Every value a caller or a client chose passes here: a secret-looking one becomes `[redacted]`. */
  const safe = (value: string, max: number): string => {
    // a resource function typed over `unknown` requests may hand back undefined or a number: never fail the record
    const result = redactValue(typeof value === "string" ? value : value == null ? "" : String(value));
    if (result.redacted) counters.valuesRedacted += 1;
    return result.value.slice(0, max);
  };

  const written = () => {
    counters.recordsWritten += 1;
    healthy = true;
  };
  const failed = (error: unknown): AuditEmitterError => {
    counters.recordsFailed += 1;
    const failure =
      error instanceof AuditEmitterError
        ? error
        : new AuditEmitterError("AUDIT_EMITTER_WRITE_FAILED", String(error), { subject: sink.name, cause: error });
    if (failure.code === "AUDIT_EMITTER_BUFFER_FULL") counters.bufferFull += 1;
    healthy = false;
    // one log line per failed batch (its records share the error), not one per record
    if (failure !== lastLogged) {
      lastLogged = failure;
      logger.error(
        { code: failure.code, target: sink.name, failMode: config.failMode, recordsFailed: counters.recordsFailed },
        failure.message,
      );
    }
    return failure;
  };

  function encode(input: RecordInput): string {
    const { attributes, dropped, redacted } = sanitizeAttributes(input.attributes);
    counters.attributesDropped += dropped;
    counters.valuesRedacted += redacted;
    const record: AuditRecord = {
      id: Bun.randomUUIDv7(),
      time: input.time.toISOString(),
      source: config.source,
      action: safe(input.action, MAX.action),
      resource: safe(input.resource, MAX.resource),
      result: safe(input.result, MAX.result),
      duration_ms: Number.isFinite(input.duration_ms) ? Math.max(0, Math.round(input.duration_ms * 1000) / 1000) : 0,
      claimed_tenant_id: safe(input.claimed_tenant_id, MAX.identity),
      principal_id: safe(input.principal_id, MAX.identity),
      tenant_id: safe(input.tenant_id, MAX.identity),
      ...(attributes ? { attributes } : {}),
    };
    const line = encodeRecord(record);
    // the newline is not counted: the agent's SVC_AGENT_MAX_LINE_BYTES bounds a line without it
    const bytes = Buffer.byteLength(line) - 1;
    if (bytes <= maxRecordBytes) return line;
    const bounded = boundRecord(record, maxRecordBytes);
    counters.recordsTruncated += 1;
    counters.attributesDropped += bounded.dropped;
    if (!warnedTruncated) {
      warnedTruncated = true; // then counted only: stats().recordsTruncated
      logger.warn(
        { action: record.action, bytes, maxRecordBytes, attributesDropped: bounded.dropped },
        "audit: a record longer than maxRecordBytes was written with its attributes cut (truncated: attributes)",
      );
    }
    return encodeRecord(bounded.record);
  }

  /** Queues one record; the promise settles when it is written, or rejects (counted, logged) when it is not. */
  function enqueue(input: RecordInput): Promise<void> {
    let line: string;
    try {
      line = encode(input);
    } catch (cause) {
      counters.recordsInvalid += 1;
      const error = new AuditEmitterError("AUDIT_EMITTER_RECORD_INVALID", `audit record refused: ${String(cause)}`, {
        subject: input.action,
        cause,
      });
      logger.error({ code: error.code, action: input.action }, error.message);
      return Promise.reject(error);
    }
    return sink.write(line).then(written, (error: unknown) => {
      throw failed(error);
    });
  }

  function write(input: RecordInput): Promise<void> | undefined {
    const pending = enqueue(input);
    if (config.failMode === "closed") return pending;
    pending.catch(() => undefined); // fail-open: counted and logged in enqueue
    return undefined;
  }

  async function record(kind: KmsEventKind, fields: EventFields = {}): Promise<void> {
    const action = Object.hasOwn(KMS_EVENT_ACTIONS, kind) ? KMS_EVENT_ACTIONS[kind] : undefined;
    if (action === undefined) {
      throw new AuditEmitterError("AUDIT_EMITTER_RECORD_INVALID", `unknown event kind ${JSON.stringify(kind)}`, {
        subject: "kind",
      });
    }
    const input: RecordInput = {
      time: fields.time ?? new Date(),
      action,
      resource: fields.resource ?? "",
      result: fields.result ?? "ok",
      duration_ms: fields.duration_ms ?? 0,
      claimed_tenant_id: fields.claimed_tenant_id ?? "",
      principal_id: fields.principal_id ?? "",
      tenant_id: fields.tenant_id ?? "",
      attributes: fields.attributes,
    };
    if (config.failMode === "closed") return enqueue(input);
    // fail-open: wait for this record's outcome, so `await record(...)` means "written or counted", never throws
    await enqueue(input).catch(() => undefined);
  }

  return {
    source: config.source,
    failMode: config.failMode,
    get healthy() {
      return healthy;
    },
    write,
    record,
    stats: () => ({ ...counters, bufferedBytes: sink.bufferedBytes }),
    flush: () => sink.flush(),
    reopen: () => sink.reopen(),
    close: () => sink.close(),
  };
}
