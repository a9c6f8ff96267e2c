import { expect, test } from "bun:test";
import { RuntimeError } from "@svc/component-runtime";
import { CONFIG_TEST_AUTH_ENV } from "@svc/component-runtime/testing";
import { thrownBy } from "@svc/testkit";
import { parseOrchestratorConfig } from "../index.ts";
import { ORCHESTRATOR_MAIN } from "./support/orchestrator-harness.ts";

const base = {
  SVC_POD_NAME: "orch-a",
  ...CONFIG_TEST_AUTH_ENV,
  SVC_COMPONENTS_PG_URL: "postgres://u:p@127.0.0.1:5432/db",
};

test("defaults: k8s-lease with 6/4/1, gRPC 50061, tick 1 s, node timeout 5 s", () => {
  expect(parseOrchestratorConfig(base)).toMatchObject({
    replica: { backend: "k8s-lease", grpcPort: 50061, timings: { leaseDurationSeconds: 6 } },
    schema: "svc_components",
    tickMs: 1000,
    nodeTimeoutMs: 5000,
  });
});

test("the model's PostgreSQL URL is required, and named", () => {
  const error = thrownBy(() => parseOrchestratorConfig({ ...base, SVC_COMPONENTS_PG_URL: undefined }), RuntimeError);
  expect(error.subject).toBe("SVC_COMPONENTS_PG_URL");
});

test("main exits 2 naming the variable for a bad value, before touching any server", async () => {
  const child = Bun.spawn([process.execPath, "run", ORCHESTRATOR_MAIN], {
    env: { ...process.env, ...base, SVC_ELECTION_BACKEND: "single-node" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(2);
  const stderr = await new Response(child.stderr).text();
  expect(stderr).toContain("SVC_ELECTION_BACKEND");
});
