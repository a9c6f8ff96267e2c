import { expect, test } from "bun:test";
import { waitFor } from "@svc/common";
import { type ElectionEvent, type LeaseAttempt, LeaseElector, type LeaseLock } from "../index.ts";

// The loop's timing rules with a scripted lock: an apiserver that stops answering mid-lease is tested with real
// processes and a stopped kube-apiserver in demo-stall.test.ts; here the loop alone, fast and exact.

const timings = { leaseDurationSeconds: 1, renewDeadlineSeconds: 0.5, retryPeriodSeconds: 0.1 };

/** Grants the lock `grants` times, then never answers again (a stalled server). */
function stallingLock(grants: number): LeaseLock & { released: number } {
  let left = grants;
  return {
    description: "scripted",
    released: 0,
    tryAcquireOrRenew(): Promise<LeaseAttempt> {
      if (left-- > 0) return Promise.resolve({ leader: true, holder: "me", term: 7 });
      return new Promise(() => {});
    },
    async release() {
      this.released++;
    },
  };
}

test("a leader that cannot renew within renewDeadline stops at the deadline and reports it; no release", async () => {
  const lock = stallingLock(2);
  const elector = new LeaseElector({ backend: "k8s-lease", identity: "me", lock, timings });
  const events: ElectionEvent[] = [];
  elector.subscribe((event) => events.push(event));
  await elector.start();
  expect(elector.currentTerm()).toBe(7);
  const leaderSignal = (events[0] as { signal: AbortSignal }).signal;
  const lost = await waitFor("lost-leadership", async () => events.find((e) => e.type === "lost-leadership"), {
    timeoutMs: 3000,
    intervalMs: 10,
  });
  expect(lost).toMatchObject({ type: "lost-leadership", term: 7, released: false, reason: "renew deadline passed" });
  expect(leaderSignal.aborted).toBe(true);
  expect(elector.isServing()).toBe(false);
  expect(elector.snapshot()).toMatchObject({ role: "follower", stopped: true });
  await elector.stop();
  expect(lock.released).toBe(0);
});

test("isServing() turns false at the deadline even while the event loop is blocked (no timer needed)", async () => {
  const elector = new LeaseElector({ backend: "k8s-lease", identity: "me", lock: stallingLock(1), timings });
  await elector.start();
  expect(elector.isServing()).toBe(true);
  const until = performance.now() + timings.renewDeadlineSeconds * 1000 + 50;
  while (performance.now() < until) {
    // busy: no timer of the elector can run here
  }
  expect(elector.isServing()).toBe(false);
  expect(elector.currentTerm()).toBeUndefined();
  await elector.stop();
});

test("a lock that reports another holder ends the leadership at once", async () => {
  let calls = 0;
  const lock: LeaseLock = {
    description: "scripted",
    async tryAcquireOrRenew() {
      calls++;
      return calls === 1 ? { leader: true, holder: "me", term: 1 } : { leader: false, holder: "other", term: 2 };
    },
    async release() {},
  };
  const elector = new LeaseElector({ backend: "postgres", identity: "me", lock, timings });
  const events: ElectionEvent[] = [];
  elector.subscribe((event) => events.push(event));
  await elector.start();
  await waitFor("lost-leadership", async () => events.find((e) => e.type === "lost-leadership"), {
    timeoutMs: 3000,
    intervalMs: 10,
  });
  expect(events.map((e) => e.type)).toEqual(["became-leader", "new-leader-observed", "lost-leadership"]);
  expect(elector.snapshot()).toMatchObject({ holder: "other", role: "follower" });
});

test("a renewal conflict on a record that still names this replica is retried, not a loss", async () => {
  let calls = 0;
  const lock: LeaseLock = {
    description: "scripted",
    async tryAcquireOrRenew() {
      calls++;
      if (calls === 2) return { leader: false, holder: "me", term: 1 };
      return { leader: true, holder: "me", term: 1 };
    },
    async release() {},
  };
  const elector = new LeaseElector({ backend: "k8s-lease", identity: "me", lock, timings });
  const events: ElectionEvent[] = [];
  elector.subscribe((event) => events.push(event));
  await elector.start();
  await waitFor("two more renewals", async () => (calls >= 4 ? true : undefined), { timeoutMs: 3000, intervalMs: 10 });
  expect(elector.isServing()).toBe(true);
  expect(events.map((e) => e.type)).toEqual(["became-leader"]);
  await elector.stop();
});
