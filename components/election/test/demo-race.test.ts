import { afterAll, expect, test } from "bun:test";
import { leaseName, stackEnv } from "@svc/testkit";
import { k8sHarness, leaderOf } from "./support/k8s-harness.ts";

// Two processes started at the same instant on a fresh Lease, 20 rounds (the count; about 1.2 s each).
const h = await k8sHarness(stackEnv().kubeconfig, "race");
afterAll(() => h.remove());

test("both replicas started at the same instant, 20 rounds: exactly one leader each time, the Lease's holder", async () => {
  for (let round = 0; round < 20; round++) {
    const lockName = leaseName(`race${round}`);
    const pair = [h.start(`${lockName}-a`, lockName), h.start(`${lockName}-b`, lockName)];
    await Promise.all(pair.map((r) => r.ready()));
    const leader = await leaderOf(pair);
    expect(await h.holderOf(lockName)).toBe(leader.pod);
    expect(pair.flatMap((r) => r.lines.filter((l) => l.event === "became-leader"))).toHaveLength(1);
    const roles = await Promise.all(pair.map((r) => r.isLeader()));
    expect(roles.filter(Boolean)).toHaveLength(1);
    await h.stopAll();
  }
});
