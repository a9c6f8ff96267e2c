import { isAbsolute, join } from "node:path";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type EmitterConfig, loadEmitterConfig } from "@svc/audit-emitter";
import { type AuthConfig, parseAuthConfig } from "@svc/auth";
import { LISTEN_HOST_PATTERN, readSecretSetting } from "@svc/common";
import { KmsError } from "./errors.ts";
import { KMS } from "./profile.ts";

const IDENTIFIER = "^[a-z_][a-z0-9_]{0,62}$";
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * The KMS's environment (docs/kms.md; spec: KMS gRPC 50090, TLS by default). Only `config.ts` reads it, and only
 * from the environment: the passphrase never comes from the command line. Integers are decimal.
 */
export const KmsEnvSchema = Type.Object({
  SVC_KMS_PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: KMS.grpcPort, description: "gRPC port (spec)" }),
  HOSTNAME: Type.String({ minLength: 1, default: "kms", description: "instance name in /health (the Pod's name)" }),
  SVC_KMS_HOST: Type.String({ pattern: LISTEN_HOST_PATTERN, default: "0.0.0.0", description: "gRPC address" }),
  SVC_KMS_HTTP_PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 8090, description: "/admin, /health" }),
  SVC_KMS_HTTP_HOST: Type.String({ pattern: LISTEN_HOST_PATTERN, default: "0.0.0.0" }),
  SVC_KMS_PG_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL of the key store" }),
  SVC_KMS_PG_POOL: Type.Integer({ minimum: 1, maximum: 100, default: 4 }),
  SVC_KMS_PG_SCHEMA: Type.String({ pattern: IDENTIFIER, default: "kms", description: "key store schema" }),
  SVC_KMS_PASSPHRASE: Type.Optional(Type.String({ minLength: 12, description: "the master key's passphrase" })),
  SVC_KMS_PASSPHRASE_FILE: Type.Optional(Type.String({ minLength: 1, description: "file holding the passphrase" })),
  SVC_KMS_BOOTSTRAP: Type.Union([Type.Literal("never"), Type.Literal("if-empty")], { default: "never" }),
  SVC_KMS_TLS: Type.Union([Type.Literal("true"), Type.Literal("false")], { default: "true" }),
  SVC_KMS_TLS_SAN: Type.String({ minLength: 1, default: "localhost,127.0.0.1,::1" }),
  SVC_KMS_TLS_CERT_DAYS: Type.Integer({ minimum: 1, maximum: 397, default: 30 }),
  SVC_KMS_CA_EXPORT_PATH: Type.Optional(Type.String({ minLength: 1, description: "absolute path of the CA file" })),
  SVC_KMS_LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { default: "info" },
  ),
});

export type KmsEnv = Static<typeof KmsEnvSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A subjectAltName of the server certificate. */
export interface SanEntry {
  type: "dns" | "ip";
  value: string;
}

export interface TlsSettings {
  enabled: boolean;
  san: SanEntry[];
  certDays: number;
  caExportPath: string;
}

export interface KmsConfig {
  grpcPort: number;
  grpcHost: string;
  /** The instance name `/health` reports (`HOSTNAME`: the Pod's name in a cluster). */
  instance: string;
  httpPort: number;
  httpHost: string;
  pgUrl: string;
  pgPool: number;
  schema: string;
  /** The secret; read from the variable or the file at parse time, never logged. */
  passphrase: string;
  bootstrap: "never" | "if-empty";
  tls: TlsSettings;
  logLevel: LogLevel;
  auth: AuthConfig;
  audit: EmitterConfig;
}

function invalid(field: string, message: string, cause?: unknown): KmsError {
  return new KmsError("KMS_CONFIG_INVALID", `${field}: ${message}`, { subject: field, cause });
}

function firstError(schema: TSchema, value: unknown): KmsError | undefined {
  const first = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const field = first.path.replace(/^\//, "").split("/")[0] ?? "";
  // A secret's value is never printed.
  const shown = field.startsWith("SVC_KMS_PASSPHRASE") ? "" : ` (got ${JSON.stringify(first.value)})`;
  return invalid(field, `${first.message}${shown}`);
}

function parseSan(raw: string): SanEntry[] {
  return raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => ({ type: /^[\d.]+$|:/.test(item) ? "ip" : "dns", value: item }));
}

/** The passphrase: exactly one of SVC_KMS_PASSPHRASE and SVC_KMS_PASSPHRASE_FILE (`readSecretSetting`). */
function readPassphrase(env: Record<string, string | undefined>): string {
  return readSecretSetting(env, "SVC_KMS_PASSPHRASE", invalid, {
    check: (passphrase) => (passphrase.length < 12 ? "the passphrase must be at least 12 characters" : undefined),
  });
}

function wrapForeign(cause: unknown): KmsError {
  const subject = (cause as { subject?: string }).subject ?? "environment";
  return new KmsError("KMS_CONFIG_INVALID", (cause as Error).message, { subject, cause });
}

/** Parses the KMS's settings from `env` (main passes `process.env`); throws `KMS_CONFIG_INVALID` naming the variable. */
export function parseKmsConfig(env: Record<string, string | undefined>): KmsConfig {
  const picked: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(KmsEnvSchema.properties)) {
    const raw = env[key];
    if (raw === undefined || raw === "") continue;
    if ((schema as TSchema).type === "integer") {
      if (!/^\d+$/.test(raw)) throw invalid(key, `expected a decimal integer (got ${JSON.stringify(raw)})`);
      picked[key] = Number(raw);
    } else {
      picked[key] = raw;
    }
  }
  const withDefaults = Value.Default(KmsEnvSchema, picked);
  const error = firstError(KmsEnvSchema, withDefaults);
  if (error) throw error;
  const parsed = withDefaults as KmsEnv;
  const passphrase = readPassphrase(env);
  const stateDir = join(env.HOME ?? "/var/lib", ".local/state/svc-ops/kms");
  const caExportPath = parsed.SVC_KMS_CA_EXPORT_PATH ?? join(stateDir, "kms-root-ca.pem");
  if (!isAbsolute(caExportPath))
    throw invalid("SVC_KMS_CA_EXPORT_PATH", `must be an absolute path (got ${caExportPath})`);
  const san = parseSan(parsed.SVC_KMS_TLS_SAN);
  if (san.length === 0) throw invalid("SVC_KMS_TLS_SAN", "names no host");

  let auth: AuthConfig;
  let audit: EmitterConfig;
  try {
    auth = parseAuthConfig(env);
  } catch (cause) {
    throw wrapForeign(cause);
  }
  try {
    // The KMS's own log: a file by default (not stdout), fail-closed by default (a key event must be recorded).
    // The default file only goes with the default sink: `SVC_AUDIT_LOG_SINK=stdout` alone is a whole setting.
    const own = Object.fromEntries(Object.entries(env).filter(([key, value]) => key.startsWith("SVC_AUDIT_") && value));
    const defaultFile =
      (own.SVC_AUDIT_LOG_SINK ?? "file") === "file" ? { SVC_AUDIT_LOG_FILE: join(stateDir, "audit.jsonl") } : {};
    audit = loadEmitterConfig(
      { SVC_AUDIT_LOG_SINK: "file", ...defaultFile, SVC_AUDIT_FAIL_MODE: "closed", ...own },
      { source: "kms" },
    );
  } catch (cause) {
    throw wrapForeign(cause);
  }
  return {
    grpcPort: parsed.SVC_KMS_PORT,
    grpcHost: parsed.SVC_KMS_HOST,
    instance: parsed.HOSTNAME,
    httpPort: parsed.SVC_KMS_HTTP_PORT,
    httpHost: parsed.SVC_KMS_HTTP_HOST,
    pgUrl: parsed.SVC_KMS_PG_URL,
    pgPool: parsed.SVC_KMS_PG_POOL,
    schema: parsed.SVC_KMS_PG_SCHEMA,
    passphrase,
    bootstrap: parsed.SVC_KMS_BOOTSTRAP,
    tls: { enabled: parsed.SVC_KMS_TLS === "true", san, certDays: parsed.SVC_KMS_TLS_CERT_DAYS, caExportPath },
    logLevel: parsed.SVC_KMS_LOG_LEVEL,
    auth,
    audit,
  };
}
