import { expect, test } from "bun:test";
import { RuntimeError } from "@svc/component-runtime";
import { CONFIG_TEST_AUTH_ENV } from "@svc/component-runtime/testing";
import { thrownBy } from "@svc/testkit";
import { COMPUTE_MAIN, parseComputeConfig } from "../index.ts";

const base = {
  SVC_POD_NAME: "compute-a",
  ...CONFIG_TEST_AUTH_ENV,
  SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: "orch-a:50061, orch-b:50061",
  SVC_COMPONENTS_PG_URL: "postgres://u:p@127.0.0.1:5432/db",
  SVC_COMPONENTS_S3_BUCKET: "shards",
};

test("defaults: k8s-lease with 6/4/1, gRPC 50062, both orchestrator addresses", () => {
  expect(parseComputeConfig(base)).toMatchObject({
    replica: { backend: "k8s-lease", grpcPort: 50062, timings: { leaseDurationSeconds: 6 } },
    orchestratorAddresses: ["orch-a:50061", "orch-b:50061"],
    heartbeatMs: 1000,
    capacityShards: 0,
    loadTimeoutMs: 10_000,
    s3: { bucket: "shards", region: "us-east-1", credentials: undefined, forcePathStyle: true },
  });
});

test("an orchestrator address without a port is refused, naming the variable", () => {
  const error = thrownBy(
    () => parseComputeConfig({ ...base, SVC_COMPUTE_ORCHESTRATOR_ADDRESSES: "orch-a" }),
    RuntimeError,
  );
  expect(error.subject).toBe("SVC_COMPUTE_ORCHESTRATOR_ADDRESSES");
});

test("a shard load timeout below 100 ms is refused, naming the variable", () => {
  const error = thrownBy(() => parseComputeConfig({ ...base, SVC_COMPUTE_LOAD_TIMEOUT_MS: "50" }), RuntimeError);
  expect(error.subject).toBe("SVC_COMPUTE_LOAD_TIMEOUT_MS");
});

test("an S3 access key without its secret is refused", () => {
  const error = thrownBy(() => parseComputeConfig({ ...base, SVC_COMPONENTS_S3_ACCESS_KEY: "k" }), RuntimeError);
  expect(error.subject).toBe("SVC_COMPONENTS_S3_SECRET_KEY");
});

test("main exits 2 naming the variable for a bad value", async () => {
  const child = Bun.spawn([process.execPath, "run", COMPUTE_MAIN], {
    env: { ...process.env, ...base, SVC_ELECTION_BACKEND: "postgres" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toContain("SVC_ELECTION_BACKEND");
});
