import { expect, test } from "bun:test";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { parseDemoConfig } from "../demo/config.ts";
import { ElectionError } from "../index.ts";

const base = { SVC_ELECTION_COMPONENT: "orchestrator", SVC_ELECTION_POD_NAME: "orch-0" };

test("defaults: the component's backend and the spec's timings; overrides are taken", () => {
  expect(parseDemoConfig(base)).toMatchObject({
    backend: "k8s-lease",
    timings: { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 },
    healthPort: 8080,
    lockName: "orchestrator-leader",
  });
  expect(parseDemoConfig({ ...base, SVC_ELECTION_COMPONENT: "backend" }).timings.leaseDurationSeconds).toBe(15);
  expect(parseDemoConfig({ ...base, SVC_ELECTION_COMPONENT: "shaper" }).backend).toBe("");
  expect(
    parseDemoConfig({ ...base, SVC_ELECTION_LEASE_DURATION_SECONDS: "3", SVC_ELECTION_RENEW_DEADLINE_SECONDS: "2" })
      .timings,
  ).toEqual({ leaseDurationSeconds: 3, renewDeadlineSeconds: 2, retryPeriodSeconds: 1 });
});

test.each([
  ["SVC_ELECTION_BACKEND", { SVC_ELECTION_BACKEND: "zookeeper" }, "ELECTION_BACKEND_UNSUPPORTED"],
  ["SVC_ELECTION_RENEW_DEADLINE_SECONDS", { SVC_ELECTION_RENEW_DEADLINE_SECONDS: "6" }, "ELECTION_TIMINGS_INVALID"],
  ["SVC_ELECTION_RETRY_PERIOD_SECONDS", { SVC_ELECTION_RETRY_PERIOD_SECONDS: "-1" }, "ELECTION_CONFIG_INVALID"],
  ["SVC_ELECTION_LEASE_DURATION_SECONDS", { SVC_ELECTION_LEASE_DURATION_SECONDS: "soon" }, "ELECTION_CONFIG_INVALID"],
  ["SVC_ELECTION_PG_URL", { SVC_ELECTION_BACKEND: "postgres" }, "ELECTION_CONFIG_INVALID"],
  ["SVC_ELECTION_COMPONENT", { SVC_ELECTION_COMPONENT: "endpoint" }, "ELECTION_CONFIG_INVALID"],
])("a bad %s is refused naming it", (field, env, code) => {
  const error = thrownBy(() => parseDemoConfig({ ...base, ...env }), ElectionError);
  expect(`${error.code} ${error.subject}`).toBe(`${code} ${field}`);
});

test.each([
  ["SVC_ELECTION_RENEW_DEADLINE_SECONDS", { SVC_ELECTION_RENEW_DEADLINE_SECONDS: "9" }],
  ["SVC_ELECTION_BACKEND", { SVC_ELECTION_BACKEND: "etcd" }],
])("the demo exits non-zero printing %s when it is bad", async (field, env) => {
  const child = Bun.spawn([process.execPath, "run", join(import.meta.dir, "../demo/main.ts")], {
    env: { ...process.env, ...base, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  expect(code).not.toBe(0);
  expect(stderr).toContain(field);
});
