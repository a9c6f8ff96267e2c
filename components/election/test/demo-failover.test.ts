import { afterAll, afterEach, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { leaseName, stackEnv } from "@svc/testkit";
import { type DemoReplica, driveTraffic, overlappingService } from "./support/demo-replica.ts";
import { k8sHarness, leaderOf } from "./support/k8s-harness.ts";

// Real processes on the stack's kube-apiserver, timings 3/2/0.5 (the spec's rules, shorter). Failover times are
// measured by bench:failover, never asserted here.
const h = await k8sHarness(stackEnv().kubeconfig, "failover");
afterEach(() => h.stopAll());
afterAll(() => h.remove());

const labelIs = (pod: string) =>
  waitFor(`the label on ${pod} only`, async () => ((await h.labelled()).join() === pod ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 50,
  });

test("two replicas: one leader, labelled, holding the Lease; the follower refuses UNAVAILABLE, 503 ready, 200 pod-ready", async () => {
  const lockName = leaseName("pair");
  const [podA, podB] = [`${lockName}-a`, `${lockName}-b`];
  await h.createPods(podA, podB);
  const pair = [h.start(podA, lockName), h.start(podB, lockName)];
  await Promise.all(pair.map((r) => r.ready()));
  const leader = await leaderOf(pair);
  const follower = pair.find((r) => r !== leader) as DemoReplica;

  await labelIs(leader.pod);
  expect(await h.holderOf(lockName)).toBe(leader.pod);

  expect((await leader.work(1)).error).toBeNull();
  const refused = await follower.work(2);
  expect(refused.error?.code).toBe(status.UNAVAILABLE);
  expect(refused.error?.details).toContain(leader.pod);
  expect((await follower.health("/health/ready")).status).toBe(503);
  expect((await follower.health("/health/pod-ready")).status).toBe(200);
  expect((await follower.health("/health")).status).toBe(200);
  expect((await follower.health("/health/whoami")).body).toMatchObject({
    component: "compute",
    pod: follower.pod,
    role: "follower",
    holder: leader.pod,
  });
  expect(follower.served()).toHaveLength(0);
});

test("kill -9 of the leader: the follower leads, removes the dead Pod's label; the restarted one rejoins as follower", async () => {
  const lockName = leaseName("kill");
  const [podA, podB] = [`${lockName}-a`, `${lockName}-b`];
  await h.createPods(podA, podB);
  const pair = [h.start(podA, lockName), h.start(podB, lockName)];
  await Promise.all(pair.map((r) => r.ready()));
  const leader = await leaderOf(pair);
  const follower = pair.find((r) => r !== leader) as DemoReplica;
  await labelIs(leader.pod);
  const live = [...pair];
  const stopTraffic = driveTraffic(() => live);

  leader.kill("SIGKILL");
  await leader.process.exited;
  await waitFor("the follower to lead", async () => ((await follower.isLeader()) ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  await labelIs(follower.pod);
  expect(await h.holderOf(lockName)).toBe(follower.pod);

  const restarted = h.start(leader.pod, lockName);
  live.push(restarted);
  await restarted.ready();
  await waitFor(
    "the restarted one to see the holder",
    async () => {
      const who = (await restarted.health("/health/whoami")).body;
      return who.holder === follower.pod ? who : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  expect((await restarted.health("/health/ready")).status).toBe(503);
  expect((await restarted.work(99)).error?.code).toBe(status.UNAVAILABLE);
  expect(await follower.isLeader()).toBe(true);
  await stopTraffic();
  expect(follower.served().length).toBeGreaterThan(0);
  expect(overlappingService([leader, follower, restarted])).toEqual([]);
});

test("graceful shutdown (SIGTERM) releases the Lease and the follower takes over with the next term", async () => {
  const lockName = leaseName("term");
  const pair = [h.start(`${lockName}-a`, lockName), h.start(`${lockName}-b`, lockName)];
  await Promise.all(pair.map((r) => r.ready()));
  const leader = await leaderOf(pair);
  const follower = pair.find((r) => r !== leader) as DemoReplica;
  const termBefore = (await leader.health("/health/whoami")).body.term as number;
  leader.kill("SIGTERM");
  expect(await leader.process.exited).toBe(0);
  expect(leader.lines.map((l) => l.event)).toContain("stopped");
  await waitFor("the follower to lead", async () => ((await follower.isLeader()) ? true : undefined), {
    timeoutMs: 5_000,
    intervalMs: 20,
  });
  expect((await follower.health("/health/whoami")).body).toMatchObject({ role: "leader", term: termBefore + 1 });
});
