import { readFileSync } from "node:fs";
import {
  type Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
  type status,
} from "@grpc/grpc-js";
import {
  type AuditServiceServer,
  AuditServiceService,
  type ExportEventsRequest,
  type ExportEventsResponse,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  type HealthServer,
  HealthService,
  type ListEventsRequest,
  type ListEventsResponse,
} from "@svc/proto";

export interface SeenCall {
  method: string;
  authorization: string | undefined;
  tenantId: string | undefined;
}

export interface TestServer {
  address: string;
  port: number;
  seen: SeenCall[];
  /** Makes every following call fail with this status (undefined = succeed). */
  failWith: { code: status; details: string } | undefined;
  stop(): Promise<void>;
}

function first(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return value === undefined ? undefined : String(value);
}

/** A real grpc-js server on 127.0.0.1:0 with Health and AuditService that records the metadata it receives. */
export async function startTestServer(tls?: { key: string; cert: string }): Promise<TestServer> {
  const server = new Server();
  const state: TestServer = {
    address: "",
    port: 0,
    seen: [],
    failWith: undefined,
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 1000).unref();
      }),
  };
  function record<Req, Res>(
    method: string,
    answer: (request: Req) => Res,
  ): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
    return (call, callback) => {
      state.seen.push({
        method,
        authorization: first(call.metadata, "authorization"),
        tenantId: first(call.metadata, "x-tenant-id"),
      });
      if (state.failWith) {
        const error = Object.assign(new Error(state.failWith.details), state.failWith) as Partial<ServiceError>;
        callback(error);
        return;
      }
      callback(null, answer(call.request));
    };
  }
  const health: HealthServer = {
    check: record<HealthCheckRequest, HealthCheckResponse>("check", () => ({
      status: HealthCheckResponse_ServingStatus.SERVING,
    })),
    list: (_call, callback) => callback(null, { statuses: {} }),
    watch: (call) => call.end(),
  };
  const audit: AuditServiceServer = {
    listEvents: record<ListEventsRequest, ListEventsResponse>("listEvents", (request) => ({
      totalCount: request.pageSize ?? 0,
      events: [],
      nextPageToken: request.header?.id ?? "",
    })),
    exportEvents: record<ExportEventsRequest, ExportEventsResponse>("exportEvents", (request) => ({
      data: Buffer.from(`${JSON.stringify({ id: request.header?.id, action: "export", result: "OK" })}\n`),
      totalCount: 1,
    })),
    exportEventsStream: (call) => call.end(),
  };
  server.addService(HealthService, health);
  server.addService(AuditServiceService, audit);
  const credentials = tls
    ? ServerCredentials.createSsl(
        null,
        [{ private_key: readFileSync(tls.key), cert_chain: readFileSync(tls.cert) }],
        false,
      )
    : ServerCredentials.createInsecure();
  state.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (error, port) => (error ? reject(error) : resolve(port))),
  );
  state.address = `127.0.0.1:${state.port}`;
  return state;
}
