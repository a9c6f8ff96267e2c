import { afterEach, expect, test } from "bun:test";
import { type HealthReport, type MetricsServer, SvcError, serveMetrics } from "../index.ts";

class TestError extends SvcError<"TEST_LISTEN_FAILED"> {}

const registry = {
  contentType: "text/plain; version=0.0.4; charset=utf-8",
  metrics: async () => "# TYPE svc_test_total counter\nsvc_test_total 3\n",
};

const open: MetricsServer[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.stop();
});

function start(health: () => HealthReport, port = 0): MetricsServer {
  const server = serveMetrics({
    host: "127.0.0.1",
    port,
    registry,
    health,
    listenError: (address, cause) => new TestError("TEST_LISTEN_FAILED", `cannot listen on ${address}`, { cause }),
  });
  open.push(server);
  return server;
}

test("/metrics serves the registry's text with its content type", async () => {
  const server = start(() => ({ healthy: true, body: {} }));
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe(registry.contentType);
  expect(await response.text()).toContain("svc_test_total 3");
});

test("/health is 200 while healthy and 503 otherwise, with the report's body", async () => {
  let healthy = true;
  const server = start(() => ({ healthy, body: { status: healthy ? "shipping" : "stalled" } }));
  const ok = await fetch(`${server.url}/health`);
  expect(ok.status).toBe(200);
  expect(await ok.json()).toEqual({ status: "shipping" });
  healthy = false;
  const stalled = await fetch(`${server.url}/health`);
  expect(stalled.status).toBe(503);
  expect(await stalled.json()).toEqual({ status: "stalled" });
});

test("any other path is 404", async () => {
  const server = start(() => ({ healthy: true, body: {} }));
  expect((await fetch(`${server.url}/admin`)).status).toBe(404);
});

test("an address that cannot be bound throws the caller's error, naming it", () => {
  const first = start(() => ({ healthy: true, body: {} }));
  const port = Number(new URL(first.url).port);
  let thrown: unknown;
  try {
    start(() => ({ healthy: true, body: {} }), port);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(SvcError);
  expect((thrown as SvcError).code).toBe("TEST_LISTEN_FAILED");
  expect((thrown as SvcError).message).toContain(`127.0.0.1:${port}`);
});
