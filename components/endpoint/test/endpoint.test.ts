import { afterAll, beforeAll, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { leaderAmong, type ReplicaProcess } from "@svc/component-runtime/testing";
import { rejectionOf } from "@svc/testkit";
import { codeOf, endpointHarness } from "./support/endpoint-harness.ts";
import type { TestRole } from "./support/test-issuer.ts";

// Two endpoints in front of two backends (k8s-lease on the stack's apiserver) and a shaper, all real processes.
let h: Awaited<ReturnType<typeof endpointHarness>>;
let backends: ReplicaProcess[];
let endpoints: ReplicaProcess[];
let appToken: string;

beforeAll(async () => {
  h = await endpointHarness("endpoint");
  const shaper = h.startShaper("shaper-x");
  await shaper.ready();
  await h.createPods("backend", "backend-a", "backend-b");
  backends = [h.startBackend("backend-a", shaper), h.startBackend("backend-b", shaper)];
  await Promise.all(backends.map((b) => b.ready()));
  endpoints = [h.startEndpoint("endpoint-a", backends, shaper), h.startEndpoint("endpoint-b", backends, shaper)];
  await Promise.all(endpoints.map((e) => e.ready()));
  appToken = await h.issuer.token(["app"]);
});
afterAll(() => h.remove());

test("both endpoints are Ready once a backend leads; /health/deps shows the backend leader; calls need a token and are audited", async () => {
  const leader = await leaderAmong(backends);
  for (const endpoint of endpoints) {
    await waitFor(
      "endpoint ready",
      async () => ((await endpoint.health("/health/ready")).status === 200 ? true : undefined),
      {
        timeoutMs: 15_000,
        intervalMs: 50,
      },
    );
    const deps = (await endpoint.health("/health/deps")).body as Record<string, Record<string, unknown>>;
    expect(deps.backend).toMatchObject({ leader: leader.pod, role: "leader" });
    expect(typeof deps.backend?.term).toBe("number");
    // orchestrator and compute are not deployed here: they do not gate readiness.
    expect(deps.compute?.address).toBeUndefined();
    expect((await endpoint.health("/health/ha")).body).toMatchObject({ ready: true, readinessGate: ["backend"] });
  }
  const api = h.client(endpoints[0] as ReplicaProcess);
  await waitFor(
    "the backend leader in office",
    async () => {
      try {
        return await api.createIndex(appToken, "idx-e", 1);
      } catch (error) {
        expect(codeOf(error)).toBe(status.UNAVAILABLE);
        return undefined;
      }
    },
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  expect(codeOf(await rejectionOf(api.submitJob(undefined, "idx-e", "x"), Error))).toBe(status.UNAUTHENTICATED);
  const { taskId } = await api.submitJob(appToken, "idx-e", "audited");
  expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
  const record = await (endpoints[0] as ReplicaProcess).waitForLine(
    (l) => l.action === "/svc.endpoint.v1.EndpointService/SubmitJob" && l.result === "ok",
  );
  expect(record).toMatchObject({
    source: "endpoint",
    principal_id: h.issuer.principalOf("app"),
    tenant_id: "tenant-a",
  });
});

test("/admin/services needs the security role and /admin/indexes the ops role; the wrong role gets 403", async () => {
  const port = await h.adminPort(endpoints[0] as ReplicaProcess);
  const get = async (path: string, roles: TestRole[]) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${await h.issuer.token(roles)}`, "x-tenant-id": "tenant-a" },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  expect((await get("/admin/services", ["ops"])).status).toBe(403);
  expect((await get("/admin/indexes", ["security"])).status).toBe(403);
  expect((await get("/admin/indexes", ["app"])).status).toBe(403);
  const services = await get("/admin/services", ["security"]);
  expect(services.status).toBe(200);
  expect(Object.keys(services.body.services as object).sort()).toEqual([
    "backend",
    "compute",
    "orchestrator",
    "shaper",
  ]);
  const indexes = await get("/admin/indexes", ["ops"]);
  expect(indexes.status).toBe(200);
  expect((indexes.body.indexes as { name: string }[]).map((i) => i.name)).toContain("idx-e");
});

test("kill -9 of the backend leader under a stream of calls: UNAVAILABLE only inside the failover window, no job lost; readiness follows backend", async () => {
  const leader = await leaderAmong(backends);
  const follower = backends.find((b) => b !== leader) as ReplicaProcess;
  const endpoint = endpoints[1] as ReplicaProcess;
  const api = h.client(endpoint);
  // endpoint's /metrics before the stream: the routed calls and route changes it counts (this test's calls are
  // the only ones through this endpoint meanwhile, so the differences are exact).
  const routed = (code: string) => endpoint.metric("svc_endpoint_routed_calls_total", { component: "backend", code });
  const changes = () => endpoint.metric("svc_endpoint_route_changes_total", { component: "backend" });
  const before = { ok: await routed("OK"), unavailable: await routed("UNAVAILABLE"), changes: await changes() };
  const serving = () => endpoint.metric("svc_endpoint_route_serving", { component: "backend" });
  expect(await serving()).toBe(1);
  const calls: { at: number; code: number | undefined; taskId?: string }[] = [];
  let running = true;
  let n = 0;
  const stream = (async () => {
    while (running) {
      const at = performance.now();
      try {
        const { taskId } = await api.submitJob(appToken, "idx-e", `stream-${n++}`);
        calls.push({ at, code: undefined, taskId });
      } catch (error) {
        calls.push({ at, code: codeOf(error) });
      }
      await Bun.sleep(50);
    }
  })();
  await waitFor(
    "calls succeeding",
    async () => (calls.filter((c) => c.code === undefined).length >= 3 ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  const killedAt = performance.now();
  leader.signal("SIGKILL");
  await waitFor(
    "a call through the new leader",
    async () => (calls.some((c) => c.at > killedAt && c.code === undefined) ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  const recoveredAt = calls.find((c) => c.at > killedAt && c.code === undefined)?.at ?? 0;
  await waitFor(
    "a few more successes",
    async () => (calls.filter((c) => c.at > recoveredAt && c.code === undefined).length >= 3 ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  running = false;
  await stream;
  const failures = calls.filter((c) => c.code !== undefined);
  expect(failures.length).toBeGreaterThan(0);
  expect(failures.every((c) => c.code === status.UNAVAILABLE)).toBe(true);
  // Every failure lies in the failover window (a call started just before the kill may fail too).
  expect(failures.every((c) => c.at >= killedAt - 3_100 && c.at < recoveredAt)).toBe(true);
  expect(calls.filter((c) => c.at > recoveredAt).every((c) => c.code === undefined)).toBe(true);
  const accepted = calls.flatMap((c) => (c.taskId ? [c.taskId] : []));
  await waitFor(
    "every accepted job done",
    async () => {
      const rows: { n: string }[] = await h.sql.unsafe(
        `SELECT count(*) AS n FROM ${h.schema}.task_queue WHERE state = 'done' AND id::text IN (SELECT jsonb_array_elements_text($1::text::jsonb))`,
        [JSON.stringify(accepted)],
      );
      return Number(rows[0]?.n) === accepted.length ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  const deps = (await (endpoints[1] as ReplicaProcess).health("/health/deps")).body as Record<
    string,
    Record<string, unknown>
  >;
  expect(deps.backend?.leader).toBe(follower.pod);
  expect((await routed("OK")) - before.ok).toBe(calls.filter((c) => c.code === undefined).length);
  expect((await routed("UNAVAILABLE")) - before.unavailable).toBe(failures.length);
  expect((await changes()) - before.changes).toBeGreaterThanOrEqual(1);
  const submitJob = "/svc.endpoint.v1.EndpointService/SubmitJob";
  expect(await endpoint.metric("svc_grpc_server_calls_total", { method: submitJob, code: "UNAVAILABLE" })).toBe(
    failures.length,
  );
  // The new backend leader counts itself leader and the calls it answered.
  expect(await follower.metric("svc_election_is_leader")).toBe(1);
  const backendSubmitJob = { method: "/svc.backend.v1.BackendService/SubmitJob", code: "OK" };
  expect(await follower.metric("svc_grpc_server_calls_total", backendSubmitJob)).toBeGreaterThanOrEqual(3);

  // With no backend at all, endpoint is not ready (and still alive, pod-ready); it is ready again once one leads.
  follower.signal("SIGKILL");
  await waitFor(
    "endpoint not ready",
    async () => ((await (endpoints[1] as ReplicaProcess).health("/health/ready")).status === 503 ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  expect((await (endpoints[1] as ReplicaProcess).health("/health/pod-ready")).status).toBe(200);
  expect(await serving()).toBe(0);
  expect(codeOf(await rejectionOf(api.getTask(appToken, accepted[0] as string), Error))).toBe(status.UNAVAILABLE);
});

test("with the stdout audit sink (the default) stdout holds only audit records and the logs go to stderr; a denied caller is named", async () => {
  const endpoint = endpoints[0] as ReplicaProcess;
  const api = h.client(endpoint);
  const opsToken = await h.issuer.token(["ops"]); // a verified caller without the app role
  const denied = await rejectionOf(api.getTask(opsToken, "00000000-0000-4000-8000-000000000000"), Error);
  expect(codeOf(denied)).toBe(status.PERMISSION_DENIED);
  const record = await endpoint.waitForLine(
    (l) => l.action === "/svc.endpoint.v1.EndpointService/GetTask" && l.result === "PERMISSION_DENIED",
  );
  expect(record).toMatchObject({ principal_id: h.issuer.principalOf("ops"), tenant_id: "tenant-a" });
  // every line of stdout is an audit record (the agent would dead-letter anything else) ...
  const parsed = endpoint.stdoutLines.map((text) => JSON.parse(text) as Record<string, unknown>);
  expect(parsed.length).toBeGreaterThanOrEqual(3);
  for (const line of parsed) {
    expect(line).toMatchObject({ source: "endpoint", id: expect.any(String), action: expect.any(String) });
    expect(line).not.toHaveProperty("msg");
  }
  // ... while the logs, such as the ready line, arrived on stderr
  expect(endpoint.lines.some((l) => l.event === "ready")).toBe(true);
  expect(parsed.some((l) => l.event === "ready" || "level" in l)).toBe(false);
});

test("SIGHUP (a rotator's postrotate kill -HUP) is logged and ignored: the endpoint keeps serving", async () => {
  const endpoint = endpoints[0] as ReplicaProcess;
  endpoint.signal("SIGHUP");
  await endpoint.waitForLine((l) => l.signal === "SIGHUP", 10_000);
  expect(endpoint.exitCode).toBeNull();
  expect((await endpoint.health("/health/pod-ready")).status).toBe(200);
  const api = h.client(endpoint);
  expect(codeOf(await rejectionOf(api.getTask(undefined, "x"), Error))).toBe(status.UNAUTHENTICATED);
});
