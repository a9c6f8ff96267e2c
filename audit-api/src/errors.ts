import { SvcError } from "@svc/common";

/** Every code of @svc/audit-api (tests assert on these, never on message text). */
export const AUDIT_API_ERROR_CODES = [
  /** A setting is missing or out of range; `subject` names the env variable. */
  "AUDIT_API_CONFIG_INVALID",
  /** A request field is wrong (gRPC INVALID_ARGUMENT, HTTP 400); `subject` names the field. */
  "AUDIT_API_INVALID_ARGUMENT",
  /** An export holds more than the largest unary answer (gRPC RESOURCE_EXHAUSTED, HTTP 413). */
  "AUDIT_API_EXPORT_TOO_LARGE",
  /** The PostgreSQL index could not be read (gRPC UNAVAILABLE when `canRetry`, else INTERNAL; HTTP 503 / 500). */
  "AUDIT_API_INDEX_FAILED",
  /** An object of the index could not be read from S3, or does not hold the line the index names. */
  "AUDIT_API_OBJECT_READ_FAILED",
] as const;

export type AuditApiErrorCode = (typeof AUDIT_API_ERROR_CODES)[number];

export class AuditApiError extends SvcError<AuditApiErrorCode> {}

/** A refused request field: the message starts with the field's name. */
export function invalidArgument(field: string, message: string): AuditApiError {
  return new AuditApiError("AUDIT_API_INVALID_ARGUMENT", `${field}: ${message}`, { subject: field });
}
