import { Type } from "@sinclair/typebox";
import type { QueryLimits } from "./config.ts";

/** Where the app serves its OpenAPI document (JSON) and the reference page over it. */
export const OPENAPI_PATH = "/openapi";
export const OPENAPI_JSON_PATH = "/openapi/json";

const Time = (what: string) =>
  Type.String({ format: "date-time", description: `${what}, RFC 3339 (an offset is normalised to UTC)` });

const Filters = {
  principal_id: Type.Optional(Type.String({ maxLength: 256, description: "only this principal's events" })),
  action: Type.Optional(Type.String({ maxLength: 256, description: "only this action, e.g. /kms.Keys/Rotate" })),
  result: Type.Optional(Type.String({ maxLength: 64, description: "only this result, e.g. PERMISSION_DENIED" })),
  resource_prefix: Type.Optional(Type.String({ maxLength: 1024, description: "resource starts with" })),
};

const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String({ description: "stable code, e.g. AUDIT_API_INVALID_ARGUMENT, AUTH_TENANT_MISMATCH" }),
    message: Type.String({ description: "for a bad field, starts with the field's name and a colon" }),
  }),
});

const AuditEvent = Type.Object(
  {
    id: Type.String(),
    time: Type.String({ format: "date-time" }),
    source: Type.String(),
    action: Type.String(),
    resource: Type.String(),
    result: Type.String(),
    duration_ms: Type.Number(),
    claimed_tenant_id: Type.String(),
    principal_id: Type.String(),
    tenant_id: Type.String(),
  },
  { description: "the stored record (spec: Audit event record), as the emitter wrote it" },
);

const errors = {
  "400": { description: "a bad field (named in the message)", content: { "application/json": { schema: ErrorBody } } },
  "401": { description: "no or an invalid bearer token", content: { "application/json": { schema: ErrorBody } } },
  "403": {
    description: "a missing scope or role, or x-tenant-id other than the token's tenant_id",
    content: { "application/json": { schema: ErrorBody } },
  },
  "503": { description: "the index or object store is unavailable (retry)" },
};

const tenantHeader = {
  name: "x-tenant-id",
  in: "header",
  required: true,
  description: "must equal the token's tenant_id; the tenant whose records are read",
  schema: { type: "string" },
};

/** The `detail` (OpenAPI operation) of each route; the body is checked by the app itself (query-request.ts). */
export function operationDetails(limits: QueryLimits) {
  const list = {
    summary: "List audit events of a time range",
    description:
      "Exact total_count and one page in (time, id) order over [start_time, end_time); needs audit:read. " +
      "An event stored twice is listed and counted once.",
    security: [{ bearerAuth: [] }],
    parameters: [tenantHeader],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: Type.Object(
            {
              start_time: Time("start, inclusive"),
              end_time: Time("end, exclusive"),
              page_size: Type.Optional(
                Type.Integer({ minimum: 1, maximum: limits.maxPageSize, default: limits.defaultPageSize }),
              ),
              page_token: Type.Optional(Type.String({ description: "next_page_token of the previous page" })),
              ...Filters,
            },
            { additionalProperties: false },
          ),
        },
      },
    },
    responses: {
      "200": {
        description: "one page",
        content: {
          "application/json": {
            schema: Type.Object({
              total_count: Type.Integer({ description: "every matching event of the range, exact" }),
              events: Type.Array(AuditEvent),
              next_page_token: Type.String({ description: "empty on the last page" }),
            }),
          },
        },
      },
      ...errors,
    },
  };
  const exportEvents = {
    summary: "Export audit events of a time range as JSONL (streamed)",
    description: "Every matching stored line, oldest first, any size; needs audit:export.",
    security: [{ bearerAuth: [] }],
    parameters: [tenantHeader],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: Type.Object(
            {
              start_time: Time("start, inclusive"),
              end_time: Time("end, exclusive"),
              format: Type.Optional(Type.Literal("EXPORT_FORMAT_JSON")),
              ...Filters,
            },
            { additionalProperties: false },
          ),
        },
      },
    },
    responses: {
      "200": {
        description: "JSONL, one stored record per line",
        content: { "application/x-ndjson": { schema: { type: "string" } } },
      },
      ...errors,
    },
  };
  return { list, exportEvents };
}

/** The document's top: title, version, the bearer scheme. */
export const DOCUMENTATION = {
  info: {
    title: "svc audit API",
    version: "2",
    description:
      "List and export the stored audit records of the caller's tenant (spec: Endpoints → Audit service). " +
      "The same queries are served over gRPC as audit.v2.AuditService (reflection enabled).",
  },
  components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } },
} as const;
