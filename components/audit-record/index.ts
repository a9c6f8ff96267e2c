export { type AuditRecord, AuditRecordSchema, isSensitiveAttribute } from "./src/audit-record.ts";
export { AUDIT_RECORD_ERROR_CODES, AuditRecordError, type AuditRecordErrorCode } from "./src/errors.ts";
export { encodeRecord, parseRecordLine, parseRecords, validateRecord } from "./src/jsonl.ts";
export { recordTimeMs } from "./src/record-time.ts";
export { newScanResult, SCANNED_FIELD, type ScanResult, scanRecord } from "./src/scan-record.ts";
export { ScannedTime } from "./src/scanned-time.ts";
