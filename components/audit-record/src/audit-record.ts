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
 * Audit records carry no sensitive plaintext (spec): attribute names that would hold a secret are refused
 * rather than written.
 */
export const SENSITIVE_ATTRIBUTE = /(pass(word|phrase)?|secret|private[_-]?key|key[_-]?material|token|face|biometric)/i;
