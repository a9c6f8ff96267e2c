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
  /** The REST port could not be listened on (taken, or not allowed); `subject` names the setting. */
  "AUDIT_API_LISTEN_FAILED",
  /** The block cache's directory cannot be created, read or written; `subject` names the setting. */
  "AUDIT_API_DISK_CACHE_FAILED",
] as const;

export type AuditApiErrorCode = (typeof AUDIT_API_ERROR_CODES)[number];

export class AuditApiError extends SvcError<AuditApiErrorCode> {}

/** A refused request field: the message starts with the field's name. */
export function invalidArgument(field: string, message: string): AuditApiError {
  return new AuditApiError("AUDIT_API_INVALID_ARGUMENT", `${field}: ${message}`, { subject: field });
}

/** Every code of the `svc-audit` CLI (`src/cli/`); printed as `[CODE]` on stderr, the exit status is 1 (2 for usage). */
export const AUDIT_CLI_ERROR_CODES = [
  /** A flag or variable is wrong; `subject` names it. */
  "AUDIT_CLI_ARGUMENT_INVALID",
  /** The token file's access token names no `tenant_id` (and no `--tenant-id` was given). */
  "AUDIT_CLI_TENANT_UNKNOWN",
  /** The audit API answered an error status (its code and message are kept); `canRetry` for 5xx. */
  "AUDIT_CLI_API_FAILED",
  /** The audit API could not be reached (retriable). */
  "AUDIT_CLI_API_UNREACHABLE",
  /** The checkpoint file is not one this CLI wrote, or was written for another query or SIEM. */
  "AUDIT_CLI_CHECKPOINT_INVALID",
  /** The SIEM refused a batch for good (4xx other than 408/429): retrying would not help. */
  "AUDIT_CLI_SIEM_REFUSED",
  /** The SIEM is down or answered 5xx/408/429, or the connection broke before it acknowledged (retriable). */
  "AUDIT_CLI_SIEM_UNAVAILABLE",
] as const;

export type AuditCliErrorCode = (typeof AUDIT_CLI_ERROR_CODES)[number];

export class AuditCliError extends SvcError<AuditCliErrorCode> {}
