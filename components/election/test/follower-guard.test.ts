import { afterAll, expect, test } from "bun:test";
import {
  type Client,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { HealthState, serveHealth } from "@svc/health";
import { HealthCheckResponse_ServingStatus, HealthClient, HealthService } from "@svc/proto";
import { type Elector, guardService, healthSource, type LeaseAttempt, LeaseElector, StaticElector } from "../index.ts";

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const definition: ServiceDefinition = {
  Work: {
    path: "/svc.test.Business/Work",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
type BusinessClient = Client & {
  Work(req: unknown, md: Metadata, cb: (err: ServiceError | null, res?: unknown) => void): void;
};
const BusinessClient = makeGenericClientConstructor(definition, "Business") as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => BusinessClient;

/** A follower: its (scripted) lock always reports pod-a holding the lease. */
const follower = new LeaseElector({
  backend: "k8s-lease",
  identity: "pod-b",
  timings: { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 },
  lock: {
    description: "scripted",
    tryAcquireOrRenew: async (): Promise<LeaseAttempt> => ({
      leader: false,
      holder: "pod-a",
      term: 3,
      expiresInMs: 5000,
    }),
    release: async () => {},
  },
});
await follower.start();
const leader = new StaticElector("single-node", "pod-s");
await leader.start();

const servers: Server[] = [];
afterAll(async () => {
  await follower.stop();
  for (const server of servers) server.forceShutdown();
});

async function serve(elector: Elector) {
  let handled = 0;
  const server = new Server();
  servers.push(server);
  server.addService(
    definition,
    guardService(elector, definition, {
      Work(_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
        handled++;
        callback(null, { ok: true });
      },
    }),
  );
  server.addService(
    HealthService,
    guardService(elector, HealthService, {
      check: (_call: unknown, callback: sendUnaryData<unknown>) =>
        callback(null, { status: HealthCheckResponse_ServingStatus.SERVING }),
    }),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const address = `127.0.0.1:${port}`;
  const work = () =>
    new Promise<{ error: ServiceError | null; response?: unknown }>((resolve) =>
      new BusinessClient(address, credentials.createInsecure()).Work({}, new Metadata(), (error, response) =>
        resolve({ error, response }),
      ),
    );
  const health = () =>
    new Promise<number | undefined>((resolve, reject) =>
      new HealthClient(address, credentials.createInsecure()).check({ service: "" }, (e, r) =>
        e ? reject(e) : resolve(r?.status),
      ),
    );
  return { work, health, handled: () => handled };
}

test("a follower answers business calls UNAVAILABLE naming the holder, without running the handler", async () => {
  const server = await serve(follower);
  const { error } = await server.work();
  expect(error?.code).toBe(status.UNAVAILABLE);
  expect(error?.details).toContain("current leader: pod-a");
  expect(server.handled()).toBe(0);
});

test("grpc.health.v1 passes the guard on a follower", async () => {
  const server = await serve(follower);
  expect(await server.health()).toBe(HealthCheckResponse_ServingStatus.SERVING);
});

test("the leader serves business calls", async () => {
  const server = await serve(leader);
  const { error, response } = await server.work();
  expect(error).toBeNull();
  expect(response).toEqual({ ok: true });
  expect(server.handled()).toBe(1);
});

test("health server on port 0: a follower is live, 503 ready, 200 pod-ready once initialized; whoami names the holder", async () => {
  const state = new HealthState("orchestrator", "pod-b", "follower");
  state.follow(healthSource(follower));
  state.markInitialized();
  const server = serveHealth(state, { port: 0, hostname: "127.0.0.1" });
  try {
    const get = async (path: string) => {
      const response = await fetch(`${server.url}${path}`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(server.port).toBeGreaterThan(0);
    expect((await get("/health")).status).toBe(200);
    expect((await get("/health/ready")).status).toBe(503);
    expect((await get("/health/pod-ready")).status).toBe(200);
    expect((await get("/health/whoami")).body).toMatchObject({
      component: "orchestrator",
      pod: "pod-b",
      role: "follower",
      holder: "pod-a",
      term: 3,
    });
  } finally {
    await server.stop();
  }
});
