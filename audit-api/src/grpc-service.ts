import { once } from "node:events";
import type { ServerUnaryCall, ServerWritableStream, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";
import { type AuthCore, authorizeService, callerOf } from "@svc/auth";
import {
  AuditEvent,
  AuditServiceService,
  type ExportEventsRequest,
  type ExportEventsResponse,
  type ExportEventsStreamRequest,
  type ExportEventsStreamResponse,
  type ListEventsRequest,
  type ListEventsResponse,
} from "@svc/proto";
import { type AuditQueries, recordsOf, type StoredRecord } from "./audit-queries.ts";
import type { QueryLimits } from "./config.ts";
import { parseExportRequest, parseListRequest, type RequestFields } from "./query-request.ts";
import { tenantOf } from "./tenant-of.ts";
import { grpcStatusOf } from "./transport-errors.ts";

/** The message's set fields under their proto (snake_case) names, for the shared request checks. */
function fieldsOf(message: object, names: Record<string, string>): RequestFields {
  const fields: RequestFields = {};
  for (const [key, name] of Object.entries(names)) {
    const value = (message as Record<string, unknown>)[key];
    if (value !== undefined) fields[name] = value;
  }
  return fields;
}

const COMMON = {
  startTime: "start_time",
  endTime: "end_time",
  principalId: "principal_id",
  action: "action",
  result: "result",
  resourcePrefix: "resource_prefix",
};

/** A stored record as `audit.v2.AuditEvent` (unknown fields dropped, attributes as strings). */
export function toAuditEvent(record: StoredRecord): AuditEvent {
  return AuditEvent.fromJSON({
    ...record,
    durationMs: record.duration_ms,
    claimedTenantId: record.claimed_tenant_id,
    principalId: record.principal_id,
    tenantId: record.tenant_id,
  });
}

/** `audit.v2.AuditService` (`list_events`, `export_events`) behind @svc/auth (`audit.list`, `audit.export`). */
export function auditServiceImplementation(
  auth: AuthCore,
  queries: AuditQueries,
  limits: QueryLimits,
): UntypedServiceImplementation {
  const implementation = {
    listEvents(call: ServerUnaryCall<ListEventsRequest, ListEventsResponse>, done: sendUnaryData<ListEventsResponse>) {
      const run = async () => {
        const fields = fieldsOf(call.request, { ...COMMON, pageSize: "page_size", pageToken: "page_token" });
        const answer = await queries.list(tenantOf(callerOf(call)), parseListRequest(fields, limits));
        return {
          totalCount: answer.totalCount,
          events: recordsOf(answer.lines).map(toAuditEvent),
          nextPageToken: answer.nextPageToken,
        };
      };
      run().then(
        (answer) => done(null, answer),
        (error: unknown) => done(grpcStatusOf(error)),
      );
    },
    exportEvents(
      call: ServerUnaryCall<ExportEventsRequest, ExportEventsResponse>,
      done: sendUnaryData<ExportEventsResponse>,
    ) {
      const run = async () => {
        const fields = fieldsOf(call.request, { ...COMMON, format: "format" });
        const answer = await queries.export(tenantOf(callerOf(call)), parseExportRequest(fields));
        return {
          data: Buffer.from(answer.data.buffer, answer.data.byteOffset, answer.data.length),
          totalCount: answer.totalCount,
        };
      };
      run().then(
        (answer) => done(null, answer),
        (error: unknown) => done(grpcStatusOf(error)),
      );
    },
    exportEventsStream(call: ServerWritableStream<ExportEventsStreamRequest, ExportEventsStreamResponse>) {
      const run = async () => {
        const fields = fieldsOf(call.request, { ...COMMON, format: "format" });
        const query = parseExportRequest(fields);
        for await (const chunk of queries.exportChunks(tenantOf(callerOf(call)), query)) {
          if (call.cancelled) return;
          const message = {
            data: Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.length),
            count: chunk.totalCount,
          };
          if (!call.write(message)) await once(call, "drain");
        }
        call.end();
      };
      run().catch((error: unknown) => call.emit("error", grpcStatusOf(error)));
    },
  };
  return authorizeService(auth, AuditServiceService, implementation as unknown as UntypedServiceImplementation, {
    listEvents: "audit.list",
    exportEvents: "audit.export",
    exportEventsStream: "audit.export",
  });
}

export { AuditServiceService };
