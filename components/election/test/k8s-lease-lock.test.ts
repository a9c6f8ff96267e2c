import { afterAll, expect, test } from "bun:test";
import { ApiException, CoordinationV1Api } from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { KubeWatchError, loadKubeConfig, makeKubeClient, makeKubeWatch } from "@svc/kube";
import { createTestNamespace, leaseName, stackEnv } from "@svc/testkit";
import { type ElectionEvent, K8sLeaseLock, LeaseElector, type LeaseTimings } from "../index.ts";

const kubeconfig = loadKubeConfig(stackEnv().kubeconfig);
const api = makeKubeClient(kubeconfig, CoordinationV1Api);
const testNamespace = await createTestNamespace(kubeconfig, "election");
const namespace = testNamespace.name;
afterAll(() => testNamespace.remove());

const timings: LeaseTimings = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

function replica(name: string, identity: string, options: { watch?: boolean; timings?: LeaseTimings } = {}) {
  const events: ElectionEvent[] = [];
  const t = options.timings ?? timings;
  const watch = options.watch ? makeKubeWatch(kubeconfig) : undefined;
  const lock = new K8sLeaseLock({
    api,
    namespace,
    name,
    identity,
    leaseDurationSeconds: t.leaseDurationSeconds,
    watch,
  });
  const elector = new LeaseElector({ backend: "k8s-lease", identity, lock, timings: t });
  elector.subscribe((event) => events.push(event));
  return { elector, events };
}

test("two electors on one Lease: exactly one leads, the Lease names it, the other observes it", async () => {
  const name = leaseName("two");
  const a = replica(name, "pod-a");
  const b = replica(name, "pod-b");
  await Promise.all([a.elector.start(), b.elector.start()]);
  try {
    const leaders = [a, b].filter((r) => r.elector.isServing());
    expect(leaders).toHaveLength(1);
    const leader = leaders[0];
    const follower = leader === a ? b : a;
    const lease = await api.readNamespacedLease({ name, namespace });
    expect(lease.spec?.holderIdentity).toBe(leader?.elector.identity);
    expect(leader?.elector.currentTerm()).toBe(lease.spec?.leaseTransitions);
    // A follower whose create lost the race learns the holder at its next attempt.
    await waitFor("the follower to observe the holder", async () => follower.elector.snapshot().holder, {
      timeoutMs: 3000,
      intervalMs: 20,
    });
    expect(follower.elector.snapshot()).toMatchObject({ role: "follower", holder: leader?.elector.identity });
    expect(follower.events.some((e) => e.type === "new-leader-observed")).toBe(true);
  } finally {
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  }
});

test("graceful stop releases the Lease as client-go does, and the follower takes over with a new term", async () => {
  const name = leaseName("release");
  const a = replica(name, "pod-a");
  await a.elector.start();
  const b = replica(name, "pod-b");
  await b.elector.start();
  try {
    expect(a.elector.isServing()).toBe(true);
    const firstTerm = a.elector.currentTerm();
    await a.elector.stop();
    expect(a.events.at(-1)).toMatchObject({ type: "lost-leadership", released: true });
    const released = await api.readNamespacedLease({ name, namespace });
    // The follower may already have taken it; if not, the release is visible.
    if (released.spec?.holderIdentity !== "pod-b") {
      expect(released.spec?.holderIdentity ?? "").toBe("");
      expect(released.spec?.leaseDurationSeconds).toBe(1);
    }
    await waitFor("pod-b to lead", async () => (b.elector.isServing() ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    expect(b.elector.currentTerm()).toBe((firstTerm ?? 0) + 1);
  } finally {
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  }
});

test("an update carrying a stale resourceVersion gets a conflict", async () => {
  const name = leaseName("conflict");
  const a = replica(name, "pod-a");
  await a.elector.start();
  try {
    const stale = await api.readNamespacedLease({ name, namespace });
    await waitFor(
      "a renewal",
      async () => {
        const now = await api.readNamespacedLease({ name, namespace });
        return now.metadata?.resourceVersion !== stale.metadata?.resourceVersion ? true : undefined;
      },
      { timeoutMs: 5000, intervalMs: 50 },
    );
    const error = await api
      .replaceNamespacedLease({ name, namespace, body: { ...stale, spec: { ...stale.spec, holderIdentity: "thief" } } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ApiException);
    expect((error as ApiException<unknown>).code).toBe(409);
    expect(a.elector.isServing()).toBe(true);
  } finally {
    await a.elector.stop();
  }
});

test("a process restarted under the holder's own name takes its Lease back with a new term", async () => {
  const name = leaseName("restart");
  const first = replica(name, "pod-a");
  await first.elector.start();
  const term = first.elector.currentTerm();
  // A crash: no release, the loop just ends with the process (here: the elector is dropped, its lock unreleased).
  (first.elector as unknown as { stopped: boolean }).stopped = true;
  const again = replica(name, "pod-a");
  await again.elector.start();
  try {
    expect(again.elector.isServing()).toBe(true);
    expect(again.elector.currentTerm()).toBe((term ?? 0) + 1);
  } finally {
    await again.elector.stop();
  }
});

test("another holder whose record keeps changing is never taken over; a silent one is, after leaseDuration", async () => {
  const name = leaseName("expiry");
  const a = replica(name, "pod-a");
  await a.elector.start();
  const b = replica(name, "pod-b");
  await b.elector.start();
  try {
    // While pod-a renews, pod-b stays a follower for well over one lease duration.
    const until = performance.now() + 2 * timings.leaseDurationSeconds * 1000;
    while (performance.now() < until) {
      expect(b.elector.isServing()).toBe(false);
      await Bun.sleep(100);
    }
    // pod-a stops renewing without releasing (a crash): pod-b takes over once the record stayed unchanged.
    (a.elector as unknown as { stopped: boolean }).stopped = true;
    const stoppedAt = performance.now();
    await waitFor("pod-b to lead", async () => (b.elector.isServing() ? true : undefined), {
      timeoutMs: 8000,
      intervalMs: 20,
    });
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(timings.leaseDurationSeconds * 1000 - 300);
  } finally {
    await b.elector.stop();
  }
});

test("a renewal seen on the watch counts as observed when it arrives, not at the follower's next read", async () => {
  const name = leaseName("observe");
  const lock = (identity: string, now?: () => number) =>
    new K8sLeaseLock({
      api,
      namespace,
      name,
      identity,
      leaseDurationSeconds: 6,
      watch: makeKubeWatch(kubeconfig),
      now,
    });
  const holder = lock("pod-a");
  expect((await holder.tryAcquireOrRenew(false, 2000)).leader).toBe(true);
  let clock = 0;
  const follower = lock("pod-b", () => clock);
  expect(await follower.tryAcquireOrRenew(false, 2000)).toMatchObject({ leader: false, expiresInMs: 6000 });
  const watching = new AbortController();
  let changes = 0;
  const watched = follower.watch(() => changes++, watching.signal).catch(() => undefined);
  try {
    clock = 1000;
    expect((await holder.tryAcquireOrRenew(true, 2000)).leader).toBe(true);
    await waitFor("the renewal on the follower's watch", async () => (changes > 0 ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 10,
    });
    // The follower's next read finds the record it already saw: its lease runs 6 s from the watch event (1000),
    // not from this read (1500).
    clock = 1500;
    expect(await follower.tryAcquireOrRenew(false, 2000)).toMatchObject({ leader: false, expiresInMs: 5500 });
  } finally {
    watching.abort();
    await watched;
  }
});

test("with the Lease watched, the follower sees the release on the watch and takes over", async () => {
  const name = leaseName("watch");
  // Polls every 5 to 9 s here: the takeover is expected from the watch (the test only asserts that it happens).
  const slow: LeaseTimings = { leaseDurationSeconds: 30, renewDeadlineSeconds: 20, retryPeriodSeconds: 10 };
  const a = replica(name, "pod-a", { watch: true, timings: slow });
  await a.elector.start();
  const b = replica(name, "pod-b", { watch: true, timings: slow });
  const seen: (string | undefined)[] = [];
  const lock = (b.elector as unknown as { lock: K8sLeaseLock }).lock;
  const watch = lock.watch.bind(lock);
  lock.watch = (changed, signal) =>
    watch((holder) => {
      seen.push(holder);
      changed(holder);
    }, signal);
  await b.elector.start();
  try {
    expect(a.elector.isServing()).toBe(true);
    expect(b.elector.snapshot()).toMatchObject({ role: "follower", holder: "pod-a" });
    const firstTerm = a.elector.currentTerm() ?? 0;
    await a.elector.stop();
    await waitFor("pod-b to lead", async () => (b.elector.isServing() ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    expect(seen).toContain(undefined); // the release came over the watch
    expect(b.elector.currentTerm()).toBe(firstTerm + 1);
    expect((await api.readNamespacedLease({ name, namespace })).spec?.holderIdentity).toBe("pod-b");
  } finally {
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  }
});

test("a watch the apiserver refuses rejects with its status, so the elector falls back to polling", async () => {
  const watch = makeKubeWatch(kubeconfig);
  const error = await watch("/apis/coordination.k8s.io/v1/namespaces/x/nosuchresource", () => {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KubeWatchError);
  expect((error as KubeWatchError).status).toBe(404);
});
