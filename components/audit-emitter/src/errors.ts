import { SvcError } from "@svc/common";

/** Every code the emitter produces. Tests and callers branch on these, never on messages. */
export const AUDIT_EMITTER_ERROR_CODES = [
  /** A bad env value; `subject` is the variable name. */
  "AUDIT_EMITTER_CONFIG_INVALID",
  /** The sink could not write (or reopen) its target; `subject` is the file path or `stdout`. */
  "AUDIT_EMITTER_WRITE_FAILED",
  /** More than `maxBufferedBytes` waiting for the target; the record was not queued. */
  "AUDIT_EMITTER_BUFFER_FULL",
  /** A write after `close()`. */
  "AUDIT_EMITTER_CLOSED",
  /** The record failed `@svc/audit-record` validation (a bug of the caller, e.g. an empty `action`). */
  "AUDIT_EMITTER_RECORD_INVALID",
  /** A wiring mistake found at start-up (`resourcesOf` names a method the service does not have). */
  "AUDIT_EMITTER_WIRING_INVALID",
] as const;

export type AuditEmitterErrorCode = (typeof AUDIT_EMITTER_ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<AuditEmitterErrorCode> = new Set([
  "AUDIT_EMITTER_WRITE_FAILED",
  "AUDIT_EMITTER_BUFFER_FULL",
]);

/** A failure of the emitter. A full buffer and a failed write may succeed later (`canRetry`); the rest do not. */
export class AuditEmitterError extends SvcError<AuditEmitterErrorCode> {
  constructor(code: AuditEmitterErrorCode, message: string, options: { subject?: string; cause?: unknown } = {}) {
    super(code, message, { ...options, canRetry: RETRYABLE.has(code) });
  }
}
