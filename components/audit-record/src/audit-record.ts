import { type Static, Type } from "@sinclair/typebox";

/**
 * One audit event: one JSONL line in object storage (spec: "Audit event record"). `action`, `resource`, `result`,
 * `duration` and `claimed_tenant_id` are the spec's names; the caller's identity is `principal_id` (and the
 * verified `tenant_id` of its token); `id` lets readers deduplicate a record written twice (a retried object
 * write under Object Lock leaves a second version). Field names match `audit.v2.AuditEvent`.
 */
export const AuditRecordSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    /** RFC 3339 UTC time of the call. */
    time: Type.String({ format: "date-time" }),
    /** The component that recorded the event (`endpoint`, `kms`, ...). */
    source: Type.String({ minLength: 1, maxLength: 64 }),
    /** What was done; for system events the gRPC operation, e.g. `/audit.v2.AuditService/list_events`. */
    action: Type.String({ minLength: 1, maxLength: 256 }),
    resource: Type.String({ maxLength: 1024 }),
    /** Outcome: `ok`, or the status name of the failure (`PERMISSION_DENIED`, `UNAVAILABLE`, ...). */
    result: Type.String({ minLength: 1, maxLength: 64 }),
    duration_ms: Type.Number({ minimum: 0 }),
    claimed_tenant_id: Type.String({ maxLength: 256 }),
    principal_id: Type.String({ maxLength: 256 }),
    tenant_id: Type.String({ maxLength: 256 }),
    attributes: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4096 }))),
  },
  { additionalProperties: false },
);

export type AuditRecord = Static<typeof AuditRecordSchema>;

/**
 * Name segments (split on `_`, `-`, `.`, camelCase and acronyms: `APIKey` is `api`, `key`) that mark an attribute as
 * holding a secret; with the words a name often runs together (`apikey`, `clientsecret`) and their plurals.
 */
const SENSITIVE_SEGMENTS = new Set([
  "password",
  "passwords",
  "passwd",
  "pwd",
  "passcode",
  "passphrase",
  "passphrases",
  "secret",
  "secrets",
  "clientsecret",
  "token",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "authtoken",
  "credential",
  "credentials",
  "authorization",
  "cookie",
  "apikey",
  "privatekey",
  "privkey",
  "face",
  "biometric",
  "plaintext",
]);
const SENSITIVE_PAIRS = [
  ["private", "key"],
  ["priv", "key"],
  ["key", "material"],
  ["api", "key"],
  ["set", "cookie"],
] as const;

function segments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .split(/[_.\-\s]+/)
    .filter((s) => s !== "");
}

/**
 * Audit records carry no sensitive plaintext (spec): an attribute whose name says it holds a secret is refused
 * rather than written. Whole name segments are compared, so `interface`, `bypass` or `max_tokens` pass while
 * `passphrase`, `api_token`, `privateKey`, `APIKey` or `clientsecret` do not. A name check cannot see a secret under
 * an innocent name (`note: "hunter2"`): the emitter's value check catches tokens, PEM blocks and long random keys, not
 * a short password, so handlers must not pass request fields into attributes.
 */
export function isSensitiveAttribute(name: string): boolean {
  const parts = segments(name);
  if (parts.some((part) => SENSITIVE_SEGMENTS.has(part))) return true;
  return SENSITIVE_PAIRS.some(([a, b]) => parts.some((part, i) => part === a && parts[i + 1] === b));
}
