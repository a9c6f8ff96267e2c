export { type AuditApi, startAuditApi } from "./src/audit-api.ts";
export { AuditQueries, type ExportAnswer, type ListAnswer, type StoredRecord } from "./src/audit-queries.ts";
export { type AuditApiConfig, AuditApiEnvSchema, parseAuditApiConfig, type QueryLimits } from "./src/config.ts";
export { AUDIT_API_ERROR_CODES, AuditApiError, type AuditApiErrorCode } from "./src/errors.ts";
export { type EventLocation, IndexReader, wholeMinutes } from "./src/index-reader.ts";
export { type PagePosition, PageTokens } from "./src/page-token.ts";
export { type AuditQuery, type ListQuery, parseExportRequest, parseListRequest } from "./src/query-request.ts";
export { normaliseRfc3339 } from "./src/rfc3339.ts";
