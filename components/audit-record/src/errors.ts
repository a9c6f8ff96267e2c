export const AUDIT_RECORD_ERROR_CODES = [
  "AUDIT_RECORD_MALFORMED_JSON",
  "AUDIT_RECORD_INVALID",
  "AUDIT_RECORD_SENSITIVE_FIELD",
] as const;

export type AuditRecordErrorCode = (typeof AUDIT_RECORD_ERROR_CODES)[number];

/** A line that is not a valid audit record; `field` is the JSON path of the offending value when there is one. */
export class AuditRecordError extends Error {
  readonly code: AuditRecordErrorCode;
  readonly field: string | undefined;
  /** 1-based line number within the JSONL input, when parsing a file or object. */
  readonly line: number | undefined;

  constructor(code: AuditRecordErrorCode, message: string, details: { field?: string; line?: number } = {}) {
    super(details.line === undefined ? message : `line ${details.line}: ${message}`);
    this.name = "AuditRecordError";
    this.code = code;
    this.field = details.field;
    this.line = details.line;
  }
}
