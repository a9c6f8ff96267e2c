import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "@svc/common";
import { describeWithServers, leaseName, type PrivateServers, startPrivateServers } from "@svc/testkit";
import { type DemoReplica, driveTraffic, overlappingService } from "./support/demo-replica.ts";
import { k8sHarness, leaderOf } from "./support/k8s-harness.ts";

// The apiserver frozen (SIGSTOP) while a 6/4/1 leader holds the Lease. A private kube-apiserver: the dev stack's
// is never stopped.
describeWithServers("election: kube-apiserver stalled under a leader", () => {
  let apiserver: PrivateServers | undefined;
  let apiserverPid = 0;
  let h: Awaited<ReturnType<typeof k8sHarness>>;
  beforeAll(async () => {
    apiserver = await startPrivateServers(["kube-apiserver"]);
    apiserverPid = apiserver.pidOf("kube-apiserver");
    h = await k8sHarness(apiserver.env.SVC_STACK_KUBECONFIG ?? "", "stall");
  }, 180_000);
  afterAll(async () => {
    await h?.remove();
    try {
      if (apiserverPid > 0) process.kill(apiserverPid, "SIGCONT"); // a failed test may leave it stopped
    } catch {
      // already gone
    }
    await apiserver?.remove();
  }, 180_000);

  test("the leader stops serving within its renew deadline and exits; after SIGCONT the other leads; never two serving", async () => {
    const spec641 = {
      SVC_ELECTION_LEASE_DURATION_SECONDS: "6",
      SVC_ELECTION_RENEW_DEADLINE_SECONDS: "4",
      SVC_ELECTION_RETRY_PERIOD_SECONDS: "1",
      SVC_ELECTION_LABEL_PODS: "false",
    };
    const lockName = leaseName("stall");
    const pair = [h.start(`${lockName}-a`, lockName, spec641), h.start(`${lockName}-b`, lockName, spec641)];
    await Promise.all(pair.map((r) => r.ready()));
    const leader = await leaderOf(pair);
    const follower = pair.find((r) => r !== leader) as DemoReplica;
    const stopTraffic = driveTraffic(() => pair);
    await waitFor("calls served by the leader", async () => (leader.served().length > 3 ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 20,
    });

    process.kill(apiserverPid, "SIGSTOP");
    const stoppedAt = performance.timeOrigin + performance.now();
    let exitCode: number;
    try {
      exitCode = await leader.process.exited;
    } finally {
      process.kill(apiserverPid, "SIGCONT");
    }
    expect(exitCode).not.toBe(0);
    expect(leader.lines.find((l) => l.event === "lost-leadership")).toMatchObject({ reason: "renew deadline passed" });
    // Its deadline runs from its last renewal sent, which came before the stall.
    const lastServed = Math.max(...leader.served().map((l) => l.at ?? 0));
    expect(lastServed).toBeLessThan(stoppedAt + 4000 + 50);

    await waitFor("the other replica to lead", async () => ((await follower.isLeader()) ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    await waitFor("calls served by the new leader", async () => (follower.served().length > 3 ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    await stopTraffic();
    expect(overlappingService(pair)).toEqual([]);
  });
});
