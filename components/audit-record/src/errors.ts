import { SvcError } from "@svc/common";

export const AUDIT_RECORD_ERROR_CODES = [
  "AUDIT_RECORD_MALFORMED_JSON",
  "AUDIT_RECORD_INVALID",
  "AUDIT_RECORD_SENSITIVE_FIELD",
] as const;

export type AuditRecordErrorCode = (typeof AUDIT_RECORD_ERROR_CODES)[number];

/** A line that is not a valid audit record; `subject` is the JSON path of the offending value when there is one. */
export class AuditRecordError extends SvcError<AuditRecordErrorCode> {
  /** 1-based line number within the JSONL input, when parsing a file or object. */
  readonly line: number | undefined;

  constructor(code: AuditRecordErrorCode, message: string, details: { subject?: string; line?: number } = {}) {
    super(code, details.line === undefined ? message : `line ${details.line}: ${message}`, {
      subject: details.subject,
    });
    this.line = details.line;
  }
}
