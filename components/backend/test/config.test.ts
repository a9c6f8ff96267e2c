import { expect, test } from "bun:test";
import { RuntimeError } from "@svc/component-runtime";
import { CONFIG_TEST_AUTH_ENV } from "@svc/component-runtime/testing";
import { thrownBy } from "@svc/testkit";
import { BACKEND_MAIN, parseBackendConfig } from "../index.ts";

const base = {
  SVC_POD_NAME: "backend-a",
  ...CONFIG_TEST_AUTH_ENV,
  SVC_BACKEND_SHAPER_ADDRESSES: "shaper-a:50064",
  SVC_COMPONENTS_PG_URL: "postgres://u:p@127.0.0.1:5432/db",
  SVC_COMPONENTS_S3_BUCKET: "shards",
};

test("defaults: k8s-lease with 15/10/2, gRPC 50063; single-node is allowed", () => {
  expect(parseBackendConfig(base)).toMatchObject({
    replica: { backend: "k8s-lease", grpcPort: 50063, timings: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10 } },
    shaperAddresses: ["shaper-a:50064"],
    tickMs: 500,
    s3: { bucket: "shards", prefix: "" },
  });
  expect(parseBackendConfig({ ...base, SVC_ELECTION_BACKEND: "single-node" }).replica.backend).toBe("single-node");
});

test("bad values are refused naming the variable", () => {
  const cases: [Record<string, string>, string][] = [
    [{ SVC_BACKEND_SHAPER_ADDRESSES: "shaper-a" }, "SVC_BACKEND_SHAPER_ADDRESSES"],
    [{ SVC_COMPONENTS_S3_PREFIX: "no-slash" }, "SVC_COMPONENTS_S3_PREFIX"],
    [{ SVC_BACKEND_TICK_MS: "5" }, "SVC_BACKEND_TICK_MS"],
    [{ SVC_ELECTION_BACKEND: "" }, "SVC_ELECTION_BACKEND"],
  ];
  for (const [env, variable] of cases) {
    expect(thrownBy(() => parseBackendConfig({ ...base, ...env }), RuntimeError).subject).toBe(variable);
  }
});

test("main exits 2 naming the variable for a bad value", async () => {
  const child = Bun.spawn([process.execPath, "run", BACKEND_MAIN], {
    env: { ...process.env, ...base, SVC_ELECTION_BACKEND: "postgres" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toContain("SVC_ELECTION_BACKEND");
});
