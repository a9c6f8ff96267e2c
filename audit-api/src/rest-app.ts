import { openapi } from "@elysiajs/openapi";
import { type AuthCore, assertRoutesCovered, bearerAuth } from "@svc/auth";
import { type HealthState, healthRoutes } from "@svc/health";
import { Elysia } from "elysia";
import type { AuditQueries, ExportAnswer, ListAnswer } from "./audit-queries.ts";
import type { QueryLimits } from "./config.ts";
import { AuditApiError, invalidArgument } from "./errors.ts";
import { DOCUMENTATION, OPENAPI_JSON_PATH, OPENAPI_PATH, operationDetails } from "./openapi-document.ts";
import { parseExportRequest, parseListRequest, type RequestFields } from "./query-request.ts";
import { tenantOf } from "./tenant-of.ts";
import { errorResponse } from "./transport-errors.ts";

const AUTH_OPTIONS = {
  operations: { "POST /v2/audit/events": "audit.list", "POST /v2/audit/events/export": "audit.export" },
  publicRoutes: [
    "GET /health",
    "GET /health/ready",
    "GET /health/pod-ready",
    "GET /health/whoami",
    `GET ${OPENAPI_PATH}`,
    `GET ${OPENAPI_JSON_PATH}`,
  ],
} as const;

function objectBody(body: unknown): RequestFields {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidArgument("body", "must be a JSON object");
  }
  return body as RequestFields;
}

/**
 * `{ total_count, events, next_page_token }` with each event's stored line copied in as it is (one JSON object):
 * no parse and re-encode of the records.
 */
function listBody(answer: ListAnswer): Uint8Array {
  const head = Buffer.from(`{"total_count":${answer.totalCount},"events":[`);
  const tail = Buffer.from(`],"next_page_token":${JSON.stringify(answer.nextPageToken)}}`);
  const comma = Buffer.from(",");
  const parts: Uint8Array[] = [head];
  answer.lines.forEach((line, i) => {
    if (i > 0) parts.push(comma);
    parts.push(line);
  });
  parts.push(tail);
  return Buffer.concat(parts);
}

/**
 * REST: `POST /v2/audit/events` (spec: Endpoints → Audit service) with body `start_time`, `end_time`,
 * `page_size`, `page_token` and the optional filters; answers `{ total_count, events, next_page_token }`.
 * `POST /v2/audit/events/export` (body: the range and filters) streams the JSONL as `application/x-ndjson`.
 */
export function restApp(auth: AuthCore, queries: AuditQueries, limits: QueryLimits, health: HealthState) {
  const details = operationDetails(limits);
  const app = new Elysia()
    .use(
      openapi({
        path: OPENAPI_PATH,
        specPath: OPENAPI_JSON_PATH,
        documentation: DOCUMENTATION as never,
        exclude: { paths: [/^\/health/] },
      }),
    )
    .use(bearerAuth(auth, AUTH_OPTIONS))
    .use(healthRoutes(health))
    .onError(({ error, code }) => {
      if (error instanceof AuditApiError) return errorResponse(error);
      if (code === "PARSE") return errorResponse(invalidArgument("body", "not a JSON object"));
      return undefined;
    })
    .post(
      "/v2/audit/events",
      async ({ body, caller }) => {
        const answer = await queries.list(tenantOf(caller), parseListRequest(objectBody(body), limits));
        return new Response(listBody(answer), { headers: { "content-type": "application/json;charset=utf-8" } });
      },
      { detail: details.list as never },
    )
    .post(
      "/v2/audit/events/export",
      async ({ body, caller }) => {
        const query = parseExportRequest(objectBody(body));
        const chunks = queries.exportChunks(tenantOf(caller), query);
        // The first chunk is read before answering, so a failure at the start is a status, not a cut stream.
        let pending: IteratorResult<ExportAnswer> | undefined = await chunks.next();
        const stream = new ReadableStream<Uint8Array>({
          pull: async (controller) => {
            const next = pending ?? (await chunks.next());
            pending = undefined;
            if (next.done) controller.close();
            else controller.enqueue(next.value.data);
          },
          cancel: async () => {
            await chunks.return(undefined);
          },
        });
        return new Response(stream, { headers: { "content-type": "application/x-ndjson" } });
      },
      { detail: details.exportEvents as never },
    );
  assertRoutesCovered(app, AUTH_OPTIONS);
  return app;
}
