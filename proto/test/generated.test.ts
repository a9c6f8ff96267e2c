import { describe, expect, test } from "bun:test";
import {
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import {
  AuditEvent,
  AuditServiceService,
  BackendServiceService,
  ComputeServiceService,
  EndpointServiceService,
  ExportEventsResponse,
  ExportFormat,
  exportFormatToJSON,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthClient,
  type HealthServer,
  HealthService,
  ListEventsRequest,
  OrchestratorServiceService,
  ShaperServiceService,
} from "../index.ts";

describe("generated messages", () => {
  test("ListEventsRequest survives an encode/decode round trip", () => {
    const request: ListEventsRequest = {
      header: { id: "req-1" },
      startTime: "2024-05-01T00:00:00Z",
      endTime: "2024-05-02T00:00:00Z",
      pageSize: 50,
      pageToken: "opaque-token",
    };
    const bytes = ListEventsRequest.encode(request).finish();
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(ListEventsRequest.decode(bytes)).toEqual(request);
  });

  test("ExportEventsResponse survives an encode/decode round trip with JSONL bytes and int64 count", () => {
    const jsonl = [
      { id: "e1", action: "/audit.v2.AuditService/list_events", result: "OK", claimed_tenant_id: "t1" },
      { id: "e2", action: "/audit.v2.AuditService/export_events", result: "OK", claimed_tenant_id: "t1" },
    ]
      .map((record) => `${JSON.stringify(record)}\n`)
      .join("");
    // env=node: `bytes` fields are Buffers.
    const response: ExportEventsResponse = { data: Buffer.from(jsonl, "utf8"), totalCount: 2 };
    const decoded = ExportEventsResponse.decode(ExportEventsResponse.encode(response).finish());
    expect(decoded).toEqual(response);
    // forceLong=number: int64 decodes to a plain number.
    expect(typeof decoded.totalCount).toBe("number");
    expect(decoded.data.toString("utf8")).toBe(jsonl);
  });

  test("AuditEvent keeps its attributes map", () => {
    const event = AuditEvent.fromPartial({ id: "e1", durationMs: 1.5, attributes: { method: "unary" } });
    expect(AuditEvent.decode(AuditEvent.encode(event).finish())).toEqual(event);
  });

  test("ExportFormat has the contract's JSON name", () => {
    expect(exportFormatToJSON(ExportFormat.EXPORT_FORMAT_JSON)).toBe("EXPORT_FORMAT_JSON");
  });
});

describe("generated service definitions", () => {
  test("audit method paths keep the contract's snake_case names", () => {
    expect(AuditServiceService.listEvents.path).toBe("/audit.v2.AuditService/list_events");
    expect(AuditServiceService.exportEvents.path).toBe("/audit.v2.AuditService/export_events");
  });

  test("orchestrator and health method paths", () => {
    expect(OrchestratorServiceService.addCompute.path).toBe("/svc.orchestrator.v1.OrchestratorService/AddCompute");
    expect(OrchestratorServiceService.removeCompute.path).toBe(
      "/svc.orchestrator.v1.OrchestratorService/RemoveCompute",
    );
    expect(OrchestratorServiceService.heartbeat.path).toBe("/svc.orchestrator.v1.OrchestratorService/Heartbeat");
    expect(ComputeServiceService.listShards.path).toBe("/svc.compute.v1.ComputeService/ListShards");
    expect(BackendServiceService.submitJob.path).toBe("/svc.backend.v1.BackendService/SubmitJob");
    expect(ShaperServiceService.runJob.path).toBe("/svc.shaper.v1.ShaperService/RunJob");
    expect(EndpointServiceService.submitJob.path).toBe("/svc.endpoint.v1.EndpointService/SubmitJob");
    expect(HealthService.check.path).toBe("/grpc.health.v1.Health/Check");
    expect(HealthService.watch.path).toBe("/grpc.health.v1.Health/Watch");
    expect(HealthService.watch.responseStream).toBe(true);
  });
});

describe("grpc-js round trip", () => {
  test("Health/Check through the generated client against a real server", async () => {
    const known = new Map([["", HealthCheckResponse_ServingStatus.SERVING]]);
    const health: HealthServer = {
      check(
        call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
        callback: sendUnaryData<HealthCheckResponse>,
      ) {
        const serving = known.get(call.request.service);
        if (serving === undefined) {
          callback({ code: status.NOT_FOUND, details: `unknown service ${call.request.service}` });
          return;
        }
        callback(null, { status: serving });
      },
      list(_call, callback) {
        callback(null, { statuses: Object.fromEntries([...known].map(([name, s]) => [name, { status: s }])) });
      },
      watch(call) {
        call.write({ status: known.get(call.request.service) ?? HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN });
        call.end();
      },
    };

    const server = new Server();
    server.addService(HealthService, health);
    let client: HealthClient | undefined;
    try {
      const port = await new Promise<number>((resolve, reject) => {
        server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, boundPort) =>
          error ? reject(error) : resolve(boundPort),
        );
      });
      client = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
      const healthClient = client;
      const deadline = () => new Date(Date.now() + 5_000);

      const response = await new Promise<HealthCheckResponse>((resolve, reject) => {
        healthClient.check({ service: "" }, new Metadata(), { deadline: deadline() }, (error, value) =>
          error ? reject(error) : resolve(value),
        );
      });
      expect(response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);

      const unknown = await new Promise<{ code?: number }>((resolve) => {
        healthClient.check({ service: "no.such.Service" }, new Metadata(), { deadline: deadline() }, (error) =>
          resolve(error ?? {}),
        );
      });
      expect(unknown.code).toBe(status.NOT_FOUND);
    } finally {
      client?.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    }
  });
});
