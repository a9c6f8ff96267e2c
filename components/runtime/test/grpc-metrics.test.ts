import { afterAll, expect, test } from "bun:test";
import {
  credentials,
  Server,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServiceError,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { bindGrpcServer } from "@svc/common";
import { guardService, type LeaseAttempt, LeaseElector } from "@svc/election";
import { ShaperServiceClient, ShaperServiceService } from "@svc/proto";
import { Registry } from "prom-client";
import { grpcRefusal } from "../index.ts";
import { grpcServerMetrics, statusName } from "../src/grpc-metrics.ts";
import { metricValue } from "../src/metric-samples.ts";

const STATUS = "/svc.shaper.v1.ShaperService/Status";
const RUN_JOB = "/svc.shaper.v1.ShaperService/RunJob";
const LOAD_KEYS = "/svc.shaper.v1.ShaperService/LoadKeys";

let statusRuns = 0;
const implementation: UntypedServiceImplementation = {
  status: (_call: unknown, done: (error: null, response: unknown) => void) => {
    statusRuns++;
    setTimeout(() => done(null, { pod: "shaper-0", term: 0, keyCount: 0, incarnation: "i" }), 30);
  },
  runJob: (_call: unknown, done: (error: Error) => void) =>
    done(grpcRefusal(status.FAILED_PRECONDITION, "key of index x is not loaded")),
  loadKeys: (_call: unknown, done: (error: null, response: unknown) => void) => done(null, { keyCount: 0 }),
};

/** An outer interceptor that turns LoadKeys' OK into PERMISSION_DENIED (as the audit interceptor replaces one). */
const replaceLoadKeys: ServerInterceptor = (method, call) =>
  new ServerInterceptingCall(call, {
    sendStatus: (statusObject, next) =>
      next(method.path === LOAD_KEYS ? { ...statusObject, code: status.PERMISSION_DENIED } : statusObject),
  });

const servers: Server[] = [];
const clients: ShaperServiceClient[] = [];
afterAll(() => {
  for (const client of clients) client.close();
  for (const server of servers) server.forceShutdown();
});

async function serve(registry: Registry, service: UntypedServiceImplementation) {
  const server = new Server({ interceptors: [grpcServerMetrics(registry), replaceLoadKeys] });
  server.addService(ShaperServiceService, service);
  servers.push(server);
  const port = await bindGrpcServer(server, "127.0.0.1:0");
  const client = new ShaperServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  clients.push(client);
  return client;
}

/** The call's status code name (`OK` when it succeeded). */
const codeOf = (call: (done: (error: ServiceError | null) => void) => void) =>
  new Promise<string>((resolve) => call((error) => resolve(statusName(error?.code ?? status.OK))));

const sample = async (registry: Registry, name: string, labels: Record<string, string>) =>
  metricValue(await registry.metrics(), name, labels);

test("calls are counted by method and final code, and timed by method", async () => {
  const registry = new Registry();
  const client = await serve(registry, implementation);
  expect(await codeOf((done) => client.status({}, done))).toBe("OK");
  expect(await codeOf((done) => client.status({}, done))).toBe("OK");
  expect(await codeOf((done) => client.runJob({ taskId: "t", indexName: "x", input: "" }, done))).toBe(
    "FAILED_PRECONDITION",
  );
  expect(await codeOf((done) => client.loadKeys({ keys: [] }, done))).toBe("PERMISSION_DENIED");

  const calls = "svc_grpc_server_calls_total";
  expect(await sample(registry, calls, { method: STATUS, code: "OK" })).toBe(2);
  expect(await sample(registry, calls, { method: RUN_JOB, code: "FAILED_PRECONDITION" })).toBe(1);
  // Innermost, the interceptor counts the status the client got, not the one the handler gave.
  expect(await sample(registry, calls, { method: LOAD_KEYS, code: "PERMISSION_DENIED" })).toBe(1);
  expect(await sample(registry, calls, { method: LOAD_KEYS, code: "OK" })).toBeUndefined();

  const duration = "svc_grpc_server_call_duration_seconds";
  const text = await registry.metrics();
  expect(text).toContain(`${duration}_count{method="${STATUS}"} 2`);
  expect(text).toContain(`${duration}_bucket{le="0.025",method="${STATUS}"} 0`); // each waited 30 ms
  expect(text).toContain(`${duration}_bucket{le="+Inf",method="${STATUS}"} 2`);
  expect(text).toContain(`${duration}_count{method="${RUN_JOB}"} 1`);
});

test("a follower's guard answers UNAVAILABLE, counted as such; the handler never runs", async () => {
  const follower = new LeaseElector({
    backend: "k8s-lease",
    identity: "shaper-1",
    lock: {
      description: "scripted",
      tryAcquireOrRenew: async (): Promise<LeaseAttempt> => ({ leader: false, holder: "shaper-0", term: 3 }),
      release: async () => {},
    },
    timings: { leaseDurationSeconds: 1, renewDeadlineSeconds: 0.5, retryPeriodSeconds: 0.1 },
  });
  await follower.start();
  try {
    const registry = new Registry();
    const client = await serve(registry, guardService(follower, ShaperServiceService, implementation));
    const runsBefore = statusRuns;
    expect(await codeOf((done) => client.status({}, done))).toBe("UNAVAILABLE");
    expect(statusRuns).toBe(runsBefore);
    expect(await sample(registry, "svc_grpc_server_calls_total", { method: STATUS, code: "UNAVAILABLE" })).toBe(1);
  } finally {
    await follower.stop();
  }
});
