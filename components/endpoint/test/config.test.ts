import { expect, test } from "bun:test";
import { RuntimeError } from "@svc/component-runtime";
import { CONFIG_TEST_AUTH_ENV } from "@svc/component-runtime/testing";
import { thrownBy } from "@svc/testkit";
import { ENDPOINT_MAIN, parseEndpointConfig } from "../index.ts";

const base = {
  SVC_POD_NAME: "endpoint-a",
  ...CONFIG_TEST_AUTH_ENV,
};

test("defaults: gRPC 50050, no election, k8s discovery, admin on 8081", () => {
  expect(parseEndpointConfig(base)).toMatchObject({
    replica: { backend: "", grpcPort: 50050, healthPort: 8080 },
    discovery: { mode: "k8s", namespace: "default" },
    adminPort: 8081,
    probeMs: 500,
  });
});

test("static discovery parses host:grpcPort/healthPort lists and needs the backend's", () => {
  const config = parseEndpointConfig({
    ...base,
    SVC_ENDPOINT_DISCOVERY: "static",
    SVC_ENDPOINT_BACKEND_REPLICAS: "10.0.0.1:50063/8080, 10.0.0.2:50063/8080",
  });
  expect(config.discovery).toMatchObject({
    mode: "static",
    replicas: {
      backend: [{ grpc: "10.0.0.1:50063", health: "10.0.0.1:8080" }, { grpc: "10.0.0.2:50063" }],
      compute: [],
    },
  });
  const missing = thrownBy(() => parseEndpointConfig({ ...base, SVC_ENDPOINT_DISCOVERY: "static" }), RuntimeError);
  expect(missing.subject).toBe("SVC_ENDPOINT_BACKEND_REPLICAS");
  const bad = thrownBy(
    () => parseEndpointConfig({ ...base, SVC_ENDPOINT_DISCOVERY: "static", SVC_ENDPOINT_BACKEND_REPLICAS: "b:1" }),
    RuntimeError,
  );
  expect(bad.subject).toBe("SVC_ENDPOINT_BACKEND_REPLICAS");
});

test("endpoint has no election: any election backend is refused; auth settings are checked too", () => {
  expect(
    thrownBy(() => parseEndpointConfig({ ...base, SVC_ELECTION_BACKEND: "k8s-lease" }), RuntimeError).subject,
  ).toBe("SVC_ELECTION_BACKEND");
  expect(thrownBy(() => parseEndpointConfig({ SVC_POD_NAME: "endpoint-a" }), RuntimeError).subject).toBe(
    "SVC_AUTH_ISSUER",
  );
});

test("main exits 2 naming the variable for a bad value", async () => {
  const child = Bun.spawn([process.execPath, "run", ENDPOINT_MAIN], {
    env: { ...process.env, ...base, SVC_ENDPOINT_PROBE_MS: "fast" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toContain("SVC_ENDPOINT_PROBE_MS");
});
