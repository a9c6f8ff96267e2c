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

/** Held by "other" (never expiring by itself) until `free()`; then the next attempt acquires. */
function heldLock(watch?: LeaseLock["watch"]) {
  let free = false;
  const state = { attempts: 0, watchCalls: 0 };
  const lock: LeaseLock = {
    description: "scripted",
    async tryAcquireOrRenew() {
      state.attempts++;
      return free ? { leader: true, holder: "me", term: 2 } : { leader: false, holder: "other", term: 1 };
    },
    async release() {},
    watch: watch
      ? (changed, signal) => {
          state.watchCalls++;
          return watch(changed, signal);
        }
      : undefined,
  };
  return { lock, state, free: () => (free = true) };
}

// Polls come every 10 to 18 s at these timings, so a takeover within a few seconds can only come from the watch.
const slow = { leaseDurationSeconds: 60, renewDeadlineSeconds: 30, retryPeriodSeconds: 20 };

test("a follower tries at once when the watch reports the release, not at its next poll", async () => {
  let report: ((holder: string | undefined) => void) | undefined;
  const scripted = heldLock((changed, signal) => {
    report = changed;
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  });
  const elector = new LeaseElector({ backend: "k8s-lease", identity: "me", lock: scripted.lock, timings: slow });
  await elector.start();
  try {
    expect(elector.snapshot()).toMatchObject({ role: "follower", holder: "other" });
    await waitFor("the watch to open", async () => report, { timeoutMs: 2000, intervalMs: 5 });
    report?.("other"); // the holder's own renewal: nothing to do
    scripted.free();
    report?.(undefined);
    await waitFor("leadership", async () => (elector.isServing() ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 5,
    });
    expect(elector.currentTerm()).toBe(2);
    expect(scripted.state.attempts).toBe(2);
  } finally {
    await elector.stop();
  }
});

test("a broken watch is reported and reopened, and polling still finds the released lock", async () => {
  const errors: unknown[] = [];
  const scripted = heldLock(async () => {
    throw new Error("watch refused");
  });
  const elector = new LeaseElector({
    backend: "k8s-lease",
    identity: "me",
    lock: scripted.lock,
    timings,
    onAttemptError: (error) => errors.push(error),
  });
  await elector.start();
  try {
    await waitFor("the watch to be reopened", async () => (scripted.state.watchCalls >= 3 ? true : undefined), {
      timeoutMs: 3000,
      intervalMs: 5,
    });
    expect(elector.isServing()).toBe(false);
    expect(errors.some((e) => (e as Error).message === "watch refused")).toBe(true);
    scripted.free();
    await waitFor("leadership by polling", async () => (elector.isServing() ? true : undefined), {
      timeoutMs: 3000,
      intervalMs: 5,
    });
    expect(elector.currentTerm()).toBe(2);
  } finally {
    await elector.stop();
  }
});
