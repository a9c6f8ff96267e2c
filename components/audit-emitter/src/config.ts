import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AuditEmitterError } from "./errors.ts";

/**
 * The emitter's settings: one TypeBox schema of the env variables, the defaults and bounds beside it. Only this
 * file reads env, and only from the object passed in. A bad value throws `AuditEmitterError`
 * `AUDIT_EMITTER_CONFIG_INVALID` whose `subject` is the variable name and whose message starts with it.
 */

export const FAIL_MODES = ["open", "closed"] as const;
export type FailMode = (typeof FAIL_MODES)[number];

export const SINK_KINDS = ["stdout", "file"] as const;
export type SinkKind = (typeof SINK_KINDS)[number];

const oneOf = <T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)));

/** The env variables the emitter reads, as strings (the shape `process.env` has). */
export const EmitterEnvSchema = Type.Object(
  {
    /** `source` of every record: the component that records (`endpoint`, `kms`, ...). */
    SVC_AUDIT_SOURCE: Type.Optional(Type.String({ pattern: "^[a-z][a-z0-9-]{0,63}$" })),
    SVC_AUDIT_LOG_SINK: Type.Optional(oneOf(SINK_KINDS)),
    /** An absolute path, not ending in `/`. */
    SVC_AUDIT_LOG_FILE: Type.Optional(Type.String({ pattern: "^/[^\\x00]*[^/\\x00]$" })),
    SVC_AUDIT_FAIL_MODE: Type.Optional(oneOf(FAIL_MODES)),
    SVC_AUDIT_LOG_MAX_BUFFER_BYTES: Type.Optional(Type.String({ pattern: "^[0-9]{1,12}$" })),
    SVC_AUDIT_LOG_MAX_RECORD_BYTES: Type.Optional(Type.String({ pattern: "^[0-9]{1,12}$" })),
    SVC_AUDIT_LOG_FSYNC: Type.Optional(oneOf(["true", "false"] as const)),
    SVC_AUDIT_LOG_ROTATE_BYTES: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$" })),
    SVC_AUDIT_LOG_ROTATE_KEEP: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$" })),
  },
  { additionalProperties: true },
);

export type EmitterEnv = Static<typeof EmitterEnvSchema>;

export const EMITTER_DEFAULTS = {
  sink: "stdout" as SinkKind,
  failMode: "open" as FailMode,
  maxBufferedBytes: 16 * 1024 * 1024,
  /** The agent's default `SVC_AGENT_MAX_LINE_BYTES`: a longer line is dead-lettered there, never stored. */
  maxRecordBytes: 64 * 1024,
  fsync: false,
  /** Size rotation of the file: off (an outside rotator, or none). */
  rotateBytes: 0,
  rotateKeep: 5,
} as const;

export const EMITTER_LIMITS = {
  maxBufferedBytes: { min: 64 * 1024, max: 1024 * 1024 * 1024 },
  /**
   * Lower bound: a record's other fields always fit with room to spare (their schema bounds, 2 112 characters in
   * all, take at most ≈ 13 KB escaped), so only attributes are ever cut. Upper bound: the agent's own maximum.
   */
  maxRecordBytes: { min: 16 * 1024, max: 1024 * 1024 },
  /** 0 (off), or at least 1 MiB: a file per few records would be a file per rotation check for the agent. */
  rotateBytes: { min: 1024 * 1024, max: 2 ** 50 },
  rotateKeep: { min: 1, max: 1000 },
} as const;

export interface EmitterConfig {
  /** `source` of every record: the component that records (`endpoint`, `kms`, ...). */
  source: string;
  sink: SinkKind;
  /** Absolute path of the JSONL file when `sink` is `file`. */
  file: string | undefined;
  failMode: FailMode;
  /** Bound of the bytes queued for the target; beyond it a record is refused (`AUDIT_EMITTER_BUFFER_FULL`). */
  maxBufferedBytes: number;
  /**
   * Longest JSON line of one record, in bytes without its newline (what the agent's `SVC_AGENT_MAX_LINE_BYTES`
   * bounds); a longer record is written with its attributes cut (`bound-record.ts`). Default
   * `EMITTER_DEFAULTS.maxRecordBytes`.
   */
  maxRecordBytes?: number;
  /** `fdatasync` after every batch written to the file (durable on disk, not only in the page cache). */
  fsync: boolean;
  /**
   * Size rotation of the file (`file-target.ts`): before a batch would take it past `bytes`, the file is renamed to
   * `<file>.1` (the older ones to `.2` … `.<keep>`, the oldest deleted) and a new one created. Undefined: off.
   */
  rotate?: { bytes: number; keep: number };
}

const invalid = (name: string, message: string) =>
  new AuditEmitterError("AUDIT_EMITTER_CONFIG_INVALID", `${name}: ${message}`, { subject: name });

/** `value` when it is an integer in `limits`; else AUDIT_EMITTER_CONFIG_INVALID naming the setting `name`. */
export function withinLimits(name: string, value: number, limits: { readonly min: number; readonly max: number }) {
  if (!Number.isInteger(value) || value < limits.min || value > limits.max) {
    throw invalid(name, `expected an integer in [${limits.min}, ${limits.max}], got ${value}`);
  }
  return value;
}

/** `raw` (decimal digits, checked by the schema) as a number in `limits`, or `fallback` when unset. */
function boundedInteger(
  name: string,
  raw: string | undefined,
  fallback: number,
  limits: { readonly min: number; readonly max: number },
): number {
  return raw === undefined ? fallback : withinLimits(name, Number(raw), limits);
}

/**
 * Parses the emitter's env variables (README, "Configuration"). Values are trimmed and a blank one counts as unset.
 * `defaults.source` is the component's own name, used when `SVC_AUDIT_SOURCE` is not set.
 */
export function loadEmitterConfig(
  env: Readonly<Record<string, string | undefined>>,
  defaults: { source: string },
): EmitterConfig {
  const present: Record<string, string> = {};
  for (const key of Object.keys(EmitterEnvSchema.properties)) {
    const value = env[key]?.trim();
    if (value) present[key] = value;
  }
  const first = Value.Errors(EmitterEnvSchema, present).First();
  if (first) {
    const name = first.path.replace(/^\//, "") || "SVC_AUDIT";
    throw invalid(name, `${first.message}, got ${JSON.stringify(first.value)}`);
  }
  const parsed = present as EmitterEnv;
  const source = parsed.SVC_AUDIT_SOURCE ?? defaults.source;
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(source)) {
    throw invalid("SVC_AUDIT_SOURCE", `unset, and the component's default ${JSON.stringify(source)} is not a name`);
  }
  const sink = parsed.SVC_AUDIT_LOG_SINK ?? EMITTER_DEFAULTS.sink;
  const file = parsed.SVC_AUDIT_LOG_FILE;
  if (sink === "file" && file === undefined) {
    throw invalid("SVC_AUDIT_LOG_FILE", "required when SVC_AUDIT_LOG_SINK=file");
  }
  if (sink !== "file" && file !== undefined) {
    // a file named while the sink is stdout is a misconfiguration, not something to ignore
    throw invalid("SVC_AUDIT_LOG_FILE", "set, but SVC_AUDIT_LOG_SINK is not file");
  }
  const maxBufferedBytes = boundedInteger(
    "SVC_AUDIT_LOG_MAX_BUFFER_BYTES",
    parsed.SVC_AUDIT_LOG_MAX_BUFFER_BYTES,
    EMITTER_DEFAULTS.maxBufferedBytes,
    EMITTER_LIMITS.maxBufferedBytes,
  );
  const maxRecordBytes = boundedInteger(
    "SVC_AUDIT_LOG_MAX_RECORD_BYTES",
    parsed.SVC_AUDIT_LOG_MAX_RECORD_BYTES,
    EMITTER_DEFAULTS.maxRecordBytes,
    EMITTER_LIMITS.maxRecordBytes,
  );
  if (maxRecordBytes > maxBufferedBytes) {
    // one record must fit in the buffer, or every record of that size would be refused as a full buffer
    throw invalid(
      "SVC_AUDIT_LOG_MAX_RECORD_BYTES",
      `${maxRecordBytes} is more than SVC_AUDIT_LOG_MAX_BUFFER_BYTES (${maxBufferedBytes})`,
    );
  }
  const rotateBytes =
    parsed.SVC_AUDIT_LOG_ROTATE_BYTES === undefined || Number(parsed.SVC_AUDIT_LOG_ROTATE_BYTES) === 0
      ? 0
      : withinLimits(
          "SVC_AUDIT_LOG_ROTATE_BYTES",
          Number(parsed.SVC_AUDIT_LOG_ROTATE_BYTES),
          EMITTER_LIMITS.rotateBytes,
        );
  const rotateKeep = boundedInteger(
    "SVC_AUDIT_LOG_ROTATE_KEEP",
    parsed.SVC_AUDIT_LOG_ROTATE_KEEP,
    EMITTER_DEFAULTS.rotateKeep,
    EMITTER_LIMITS.rotateKeep,
  );
  if (rotateBytes > 0 && sink !== "file") {
    throw invalid("SVC_AUDIT_LOG_ROTATE_BYTES", "set, but SVC_AUDIT_LOG_SINK is not file");
  }
  if (rotateBytes === 0 && parsed.SVC_AUDIT_LOG_ROTATE_KEEP !== undefined) {
    throw invalid("SVC_AUDIT_LOG_ROTATE_KEEP", "set, but SVC_AUDIT_LOG_ROTATE_BYTES is not");
  }
  return {
    source,
    sink,
    file,
    ...(rotateBytes > 0 ? { rotate: { bytes: rotateBytes, keep: rotateKeep } } : {}),
    failMode: parsed.SVC_AUDIT_FAIL_MODE ?? EMITTER_DEFAULTS.failMode,
    maxBufferedBytes,
    maxRecordBytes,
    fsync: (parsed.SVC_AUDIT_LOG_FSYNC ?? String(EMITTER_DEFAULTS.fsync)) === "true",
  };
}
