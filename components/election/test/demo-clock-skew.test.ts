import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "@svc/common";
import { ensureTool, leaseName, stackEnv } from "@svc/testkit";
import type { DemoReplica } from "./support/demo-replica.ts";
import { k8sHarness, leaderOf } from "./support/k8s-harness.ts";

// Followers whose wall clocks are 30 s ahead and 30 s behind (libfaketime, Debian package `faketime`). Expiry is
// judged on each process's own monotonic clock since it saw the Lease change, so neither takes over early.

let faketime: string;
let h: Awaited<ReturnType<typeof k8sHarness>>;
beforeAll(async () => {
  faketime = await ensureTool("faketime");
  h = await k8sHarness(stackEnv().kubeconfig, "skew");
}, 120_000);
afterAll(() => h.remove());

/** Wall-clock skew of a replica, read from the `time` field of its own log lines. */
const skewOf = (replica: DemoReplica) => {
  const line = replica.lines.find((l) => l.event === "ready") as { time?: number } | undefined;
  return (line?.time ?? 0) - Date.now();
};

test("followers 30 s ahead or behind do not take over early; after the leader dies one of them leads", async () => {
  const lockName = leaseName("skew");
  const leader = h.start(`${lockName}-a`, lockName);
  await leader.ready();
  await leaderOf([leader]);
  const ahead = h.start(`${lockName}-ahead`, lockName, {}, [faketime, "-f", "+30s"]);
  const behind = h.start(`${lockName}-behind`, lockName, {}, [faketime, "-f", "-30s"]);
  await Promise.all([ahead.ready(), behind.ready()]);
  // The skew is real in those processes.
  expect(skewOf(ahead)).toBeGreaterThan(25_000);
  expect(skewOf(behind)).toBeLessThan(-25_000);

  // Two whole lease durations (3 s each) of observation: the leader stays the only one.
  const until = performance.now() + 6_000;
  while (performance.now() < until) {
    expect(await Promise.all([leader, ahead, behind].map((r) => r.isLeader()))).toEqual([true, false, false]);
    await Bun.sleep(100);
  }
  expect(await h.holderOf(lockName)).toBe(leader.pod);
  expect([ahead, behind].flatMap((r) => r.lines.filter((l) => l.event === "became-leader"))).toHaveLength(0);

  leader.kill("SIGKILL");
  await leader.process.exited;
  const next = await leaderOf([ahead, behind]);
  await waitFor("the Lease to name it", async () => ((await h.holderOf(lockName)) === next.pod ? true : undefined), {
    timeoutMs: 5000,
    intervalMs: 50,
  });
});
