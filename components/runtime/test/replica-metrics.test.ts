import { afterAll, expect, test } from "bun:test";
import { credentials } from "@grpc/grpc-js";
import { HealthClient } from "@svc/proto";
import pino from "pino";
import { parseReplicaConfig, type Replica, startReplica } from "../index.ts";
import { dutyCounter } from "../src/duty-metrics.ts";
import { metricValue } from "../src/metric-samples.ts";
import { COMPUTE_PROFILE_FOR_TEST } from "./support/profiles.ts";

// Two replicas in one process (no election: no server needed): their registries must not collide, and each
// health port serves its own elector and gRPC metrics beside the process's duty counters.
const env = (pod: string) => ({
  SVC_POD_NAME: pod,
  SVC_ELECTION_BACKEND: "",
  SVC_HOST: "127.0.0.1",
  SVC_HEALTH_PORT: "0",
  SVC_GRPC_PORT: "0",
  SVC_AUTH_DISABLED: "true",
  SVC_AUTH_DISABLED_ACKNOWLEDGE: "test-environment-only",
});
const logger = pino({ level: "silent" });
const replicas: Replica[] = [];
afterAll(() => Promise.all(replicas.map((r) => r.stop())));

const scrape = async (replica: Replica) => {
  const response = await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return response.text();
};

test("two replicas in one process: each /metrics has its own calls, both the shared duty counters", async () => {
  for (const pod of ["compute-m0", "compute-m1"]) {
    const config = parseReplicaConfig(COMPUTE_PROFILE_FOR_TEST, env(pod), 0);
    replicas.push(await startReplica({ profile: COMPUTE_PROFILE_FOR_TEST, config, logger, services: [] }));
  }
  const [first, second] = replicas as [Replica, Replica];
  const client = new HealthClient(`127.0.0.1:${first.grpcPort}`, credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) =>
      client.check({ service: "" }, (error) => (error ? reject(error) : resolve())),
    );
  } finally {
    client.close();
  }
  const duty = dutyCounter("svc_compute_test_duty_total", "a duty counter of this test");
  duty.inc(2);

  const check = { method: "/grpc.health.v1.Health/Check", code: "OK" };
  const [a, b] = [await scrape(first), await scrape(second)];
  expect(metricValue(a, "svc_grpc_server_calls_total", check)).toBe(1);
  expect(metricValue(b, "svc_grpc_server_calls_total", check)).toBeUndefined();
  for (const text of [a, b]) {
    expect(metricValue(text, "svc_election_is_leader", { component: "compute", backend: "none" })).toBe(1);
    expect(metricValue(text, "svc_compute_test_duty_total")).toBe(2);
  }
  // made on first use: a second definition answers the same counter instead of failing on the name
  expect(dutyCounter("svc_compute_test_duty_total", "again")).toBe(duty);
});
