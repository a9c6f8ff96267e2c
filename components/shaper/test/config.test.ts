import { expect, test } from "bun:test";
import { RuntimeError } from "@svc/component-runtime";
import { CONFIG_TEST_AUTH_ENV } from "@svc/component-runtime/testing";
import { thrownBy } from "@svc/testkit";
import { parseShaperConfig, SHAPER_MAIN } from "../index.ts";

const base = {
  SVC_POD_NAME: "shaper-a",
  ...CONFIG_TEST_AUTH_ENV,
  SVC_COMPONENTS_PG_URL: "postgres://u:p@127.0.0.1:5432/db",
};

test("defaults: no election (HA opt-in), grace 120 s; k8s-lease takes 15/10/2", () => {
  expect(parseShaperConfig(base)).toMatchObject({
    replica: { backend: "", grpcPort: 50064 },
    graceSeconds: 120,
    jobWorkMs: 0,
  });
  expect(parseShaperConfig({ ...base, SVC_ELECTION_BACKEND: "k8s-lease" }).replica.timings).toEqual({
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
  });
});

test("a backend the shaper does not support is refused, naming the variable", () => {
  const error = thrownBy(() => parseShaperConfig({ ...base, SVC_ELECTION_BACKEND: "single-node" }), RuntimeError);
  expect(error.subject).toBe("SVC_ELECTION_BACKEND");
});

test("main exits 2 naming the variable for a bad value", async () => {
  const child = Bun.spawn([process.execPath, "run", SHAPER_MAIN], {
    env: { ...process.env, ...base, SVC_SHAPER_TERMINATION_GRACE_SECONDS: "0" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toContain("SVC_SHAPER_TERMINATION_GRACE_SECONDS");
});
