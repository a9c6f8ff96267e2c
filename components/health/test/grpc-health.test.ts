import { afterEach, expect, test } from "bun:test";
import { credentials, Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { type HealthCheckResponse, HealthCheckResponse_ServingStatus, HealthClient, HealthService } from "@svc/proto";
import { grpcHealth, HealthState } from "../index.ts";

const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = HealthCheckResponse_ServingStatus;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function serve(state: HealthState, pollMs = 10): Promise<HealthClient> {
  const server = new Server();
  server.addService(HealthService, grpcHealth(state, ["svc.test.v1.Work"], pollMs));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const client = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  cleanups.push(() => {
    client.close();
    server.forceShutdown();
  });
  return client;
}

const check = (client: HealthClient, service: string) =>
  new Promise<number>((resolve, reject) =>
    client.check({ service }, (error, answer) => (error ? reject(error) : resolve(answer.status))),
  );

test("check follows /health/ready: a follower is NOT_SERVING, the leader SERVING", async () => {
  let role: "leader" | "follower" = "follower";
  const state = new HealthState("backend", "backend-0", "follower");
  state.follow({ role: () => role, holder: () => undefined, term: () => undefined });
  state.markInitialized();
  const client = await serve(state);
  expect(await check(client, "")).toBe(NOT_SERVING);
  expect(await check(client, "svc.test.v1.Work")).toBe(NOT_SERVING);
  role = "leader";
  expect(await check(client, "")).toBe(SERVING);
});

test("an active replica is NOT_SERVING until initialized", async () => {
  const state = new HealthState("endpoint", "endpoint-0", "active");
  const client = await serve(state);
  expect(await check(client, "svc.test.v1.Work")).toBe(NOT_SERVING);
  state.markInitialized();
  expect(await check(client, "svc.test.v1.Work")).toBe(SERVING);
});

test("an unknown service name is NOT_FOUND on check and SERVICE_UNKNOWN on watch", async () => {
  const state = new HealthState("endpoint", "endpoint-0", "active");
  state.markInitialized();
  const client = await serve(state);
  const error = await check(client, "other.Service").then(
    () => undefined,
    (e: ServiceError) => e,
  );
  expect(error?.code).toBe(status.NOT_FOUND);
  const watch = client.watch({ service: "other.Service" });
  watch.on("error", () => {});
  const first = await new Promise<HealthCheckResponse>((resolve) => watch.once("data", resolve));
  expect(first.status).toBe(SERVICE_UNKNOWN);
  watch.cancel();
});

const waitUntil = (condition: () => boolean) =>
  waitFor("the watch's next status", async () => (condition() ? true : undefined), { timeoutMs: 5_000, intervalMs: 5 });

test("watch sends the status at once and again when it changes, not otherwise", async () => {
  let role: "leader" | "follower" = "leader";
  const state = new HealthState("shaper", "shaper-0", "leader");
  state.follow({ role: () => role, holder: () => undefined, term: () => undefined });
  const client = await serve(state);
  const watch = client.watch({ service: "" });
  watch.on("error", () => {});
  const seen: number[] = [];
  watch.on("data", (answer: HealthCheckResponse) => seen.push(answer.status));
  await waitUntil(() => seen.length === 1);
  role = "follower";
  await waitUntil(() => seen.length === 2);
  role = "leader";
  await waitUntil(() => seen.length === 3);
  watch.cancel();
  expect(seen).toEqual([SERVING, NOT_SERVING, SERVING]);
});

test("list names the server and every service given", async () => {
  const state = new HealthState("endpoint", "endpoint-0", "active");
  state.markInitialized();
  const client = await serve(state);
  const statuses = await new Promise<Record<string, HealthCheckResponse>>((resolve, reject) =>
    client.list({}, (error, answer) => (error ? reject(error) : resolve(answer.statuses))),
  );
  expect(Object.keys(statuses).sort()).toEqual(["", "svc.test.v1.Work"]);
  expect(statuses[""]?.status).toBe(SERVING);
});
