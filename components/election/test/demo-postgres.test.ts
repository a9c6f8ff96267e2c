import { afterAll, afterEach, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { DemoReplica, driveTraffic, overlappingService } from "./support/demo-replica.ts";
import { leaderOf, TEST_TIMINGS } from "./support/k8s-harness.ts";

// The postgres backend (orchestrator outside a cluster) with real demo processes on the stack's PostgreSQL.
const url = stackEnv().postgresUrl;
const table = randomName("t_election").replaceAll("-", "_");
const replicas: DemoReplica[] = [];
afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.stop()));
});
afterAll(async () => {
  const sql = new SQL(url);
  await sql.unsafe(`DROP TABLE IF EXISTS ${table}`);
  await sql.close();
});

function start(pod: string): DemoReplica {
  const replica = new DemoReplica(pod, {
    SVC_ELECTION_COMPONENT: "orchestrator",
    SVC_ELECTION_BACKEND: "postgres",
    SVC_ELECTION_PG_URL: url,
    SVC_ELECTION_PG_TABLE: table,
    ...TEST_TIMINGS,
  });
  replicas.push(replica);
  return replica;
}

test("postgres: kill -9 of the leader hands over with the next epoch; the restarted one rejoins as follower", async () => {
  const pair = [start("orch-a"), start("orch-b")];
  await Promise.all(pair.map((r) => r.ready()));
  const leader = await leaderOf(pair);
  const follower = pair.find((r) => r !== leader) as DemoReplica;
  const term = (await leader.health("/health/whoami")).body.term as number;
  expect((await follower.work()).error?.code).toBe(status.UNAVAILABLE);
  const live = [...pair];
  const stopTraffic = driveTraffic(() => live);

  leader.kill("SIGKILL");
  await leader.process.exited;
  await waitFor("the follower to lead", async () => ((await follower.isLeader()) ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  expect((await follower.health("/health/whoami")).body).toMatchObject({ role: "leader", term: term + 1 });

  const restarted = start(leader.pod);
  live.push(restarted);
  await restarted.ready();
  expect((await restarted.health("/health/whoami")).body).toMatchObject({ role: "follower", holder: follower.pod });
  expect((await restarted.work()).error?.code).toBe(status.UNAVAILABLE);
  await stopTraffic();
  expect(overlappingService([leader, follower, restarted])).toEqual([]);
});
