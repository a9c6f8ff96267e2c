import type { QueryLimits } from "./config.ts";
import { invalidArgument } from "./errors.ts";
import { compareUtc, normaliseRfc3339 } from "./rfc3339.ts";

/** What selects events: a half-open UTC range `[start, end)` of the tenant, and optional equality / prefix filters. */
export interface AuditQuery {
  start: string;
  end: string;
  principalId?: string;
  action?: string;
  result?: string;
  resourcePrefix?: string;
}

export interface ListQuery {
  query: AuditQuery;
  pageSize: number;
  /** Empty for the first page. */
  pageToken: string;
}

/** One request as both transports carry it (REST body keys; gRPC fields mapped to them). */
export type RequestFields = Record<string, unknown>;

const FILTERS = [
  ["principal_id", "principalId", 256],
  ["action", "action", 256],
  ["result", "result", 64],
  ["resource_prefix", "resourcePrefix", 1024],
] as const;

const LIST_FIELDS = new Set([
  "header",
  "start_time",
  "end_time",
  "page_size",
  "page_token",
  ...FILTERS.map((f) => f[0]),
]);
const EXPORT_FIELDS = new Set(["header", "start_time", "end_time", "format", ...FILTERS.map((f) => f[0])]);

/** Largest page token accepted (a real one is about 200 characters). */
const MAX_PAGE_TOKEN_LENGTH = 1024;

function refuseUnknown(fields: RequestFields, known: ReadonlySet<string>): void {
  for (const key of Object.keys(fields)) {
    if (!known.has(key)) throw invalidArgument(key, "unknown field");
  }
}

/** The range and filters of a request; throws `AUDIT_API_INVALID_ARGUMENT` naming the first bad field. */
function parseQuery(fields: RequestFields): AuditQuery {
  const start = normaliseRfc3339("start_time", fields.start_time);
  const end = normaliseRfc3339("end_time", fields.end_time);
  if (compareUtc(end, start) < 0) throw invalidArgument("end_time", `${end} is before start_time ${start}`);
  const query: AuditQuery = { start, end };
  for (const [name, key, maxLength] of FILTERS) {
    const value = fields[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") throw invalidArgument(name, "must be a string");
    if (value.length > maxLength) throw invalidArgument(name, `longer than ${maxLength} characters`);
    if (value.includes("\u0000")) throw invalidArgument(name, "must not contain U+0000");
    query[key] = value;
  }
  return query;
}

/** Checks a list request (REST body or mapped gRPC message). */
export function parseListRequest(fields: RequestFields, limits: QueryLimits): ListQuery {
  refuseUnknown(fields, LIST_FIELDS);
  const query = parseQuery(fields);
  let pageSize = limits.defaultPageSize;
  const size = fields.page_size;
  if (size !== undefined && size !== null) {
    if (typeof size !== "number" || !Number.isInteger(size)) throw invalidArgument("page_size", "must be an integer");
    if (size < 1 || size > limits.maxPageSize) {
      throw invalidArgument("page_size", `${size} is outside 1..${limits.maxPageSize}`);
    }
    pageSize = size;
  }
  const token = fields.page_token ?? "";
  if (typeof token !== "string") throw invalidArgument("page_token", "must be a string");
  if (token.length > MAX_PAGE_TOKEN_LENGTH) throw invalidArgument("page_token", "malformed");
  return { query, pageSize, pageToken: token };
}

/** Checks an export request; `format` may be absent, `EXPORT_FORMAT_JSON` / `EXPORT_FORMAT_UNSPECIFIED` (or 0 / 1). */
export function parseExportRequest(fields: RequestFields): AuditQuery {
  refuseUnknown(fields, EXPORT_FIELDS);
  const format = fields.format;
  const json = [undefined, null, 0, 1, "EXPORT_FORMAT_JSON", "EXPORT_FORMAT_UNSPECIFIED"];
  if (!json.includes(format as never)) throw invalidArgument("format", `unsupported (only EXPORT_FORMAT_JSON)`);
  return parseQuery(fields);
}

/** A stable digest input of the query (page tokens are bound to it). */
export function canonicalQuery(query: AuditQuery): string {
  return JSON.stringify([
    query.start,
    query.end,
    query.principalId ?? null,
    query.action ?? null,
    query.result ?? null,
    query.resourcePrefix ?? null,
  ]);
}
