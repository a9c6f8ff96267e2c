import { expect, test } from "bun:test";
import { HealthState, healthRoutes } from "../index.ts";

const get = async (app: ReturnType<typeof healthRoutes>, path: string) => {
  const response = await app.handle(new Request(`http://local${path}`));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

test("a leader answers 200 on /health, /health/ready and /health/pod-ready", async () => {
  const state = new HealthState("backend", "backend-0", "leader");
  const app = healthRoutes(state);
  for (const path of ["/health", "/health/ready", "/health/pod-ready"]) expect((await get(app, path)).status).toBe(200);
});

test("a follower is live, not ready (503), and pod-ready only once initialized", async () => {
  const state = new HealthState("backend", "backend-1", "follower");
  const app = healthRoutes(state);
  expect((await get(app, "/health")).status).toBe(200);
  expect(await get(app, "/health/ready")).toEqual({ status: 503, body: { ready: false, role: "follower" } });
  expect((await get(app, "/health/pod-ready")).status).toBe(503);
  state.markInitialized();
  expect((await get(app, "/health/pod-ready")).status).toBe(200);
  expect((await get(app, "/health/ready")).status).toBe(503);
});

test("promotion flips /health/ready from 503 to 200", async () => {
  const state = new HealthState("orchestrator", "orchestrator-1", "follower");
  const app = healthRoutes(state);
  expect((await get(app, "/health/ready")).status).toBe(503);
  state.setRole("leader");
  expect((await get(app, "/health/ready")).status).toBe(200);
});

test("/health/whoami names the pod, component and role", async () => {
  const app = healthRoutes(new HealthState("compute", "compute-0", "leader"));
  expect((await get(app, "/health/whoami")).body).toMatchObject({
    component: "compute",
    pod: "compute-0",
    role: "leader",
  });
});

test("/health/deps and /health/ha exist only where diagnostics are given (endpoint)", async () => {
  const plain = healthRoutes(new HealthState("backend", "backend-0", "leader"));
  expect((await plain.handle(new Request("http://local/health/deps"))).status).toBe(404);
  const endpoint = healthRoutes(new HealthState("endpoint", "endpoint-0", "active"), {
    deps: async () => ({ backend: "ready" }),
    ha: async () => ({ leaders: { backend: "backend-0" } }),
  });
  expect((await get(endpoint, "/health/deps")).body).toEqual({ backend: "ready" });
  expect((await get(endpoint, "/health/ha")).body).toEqual({ leaders: { backend: "backend-0" } });
});

test("/metrics serves the given source's text with its content type, whatever the role; 404 without one", async () => {
  const plain = healthRoutes(new HealthState("backend", "backend-1", "follower"));
  expect((await plain.handle(new Request("http://local/metrics"))).status).toBe(404);
  const source = {
    contentType: "text/plain; version=0.0.4; charset=utf-8",
    metrics: async () => "# HELP svc_x_total x\n# TYPE svc_x_total counter\nsvc_x_total 3\n",
  };
  const app = healthRoutes(new HealthState("backend", "backend-1", "follower"), undefined, source);
  const response = await app.handle(new Request("http://local/metrics"));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe(source.contentType);
  expect(await response.text()).toBe(await source.metrics());
});
