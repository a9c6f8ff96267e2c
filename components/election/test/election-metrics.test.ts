import { afterAll, expect, test } from "bun:test";
import { KubeConfig } from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { loadKubeConfig } from "@svc/kube";
import { createTestNamespace, hangUpListener, leaseName, stackEnv } from "@svc/testkit";
import { Registry } from "prom-client";
import { createElector, ElectionMetrics, type LeaseAttempt, LeaseElector, type LeaseLock } from "../index.ts";

const kubeconfig = loadKubeConfig(stackEnv().kubeconfig);
const testNamespace = await createTestNamespace(kubeconfig, "metrics");
afterAll(() => testNamespace.remove());

const timings = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };
const value = async (registry: Registry, name: string) =>
  (await registry.getSingleMetric(name)?.get())?.values.reduce((sum, v) => sum + v.value, 0);

test("a leader's metrics: is_leader 1, its term, one became_leader change; released counts on stop", async () => {
  const registry = new Registry();
  const elector = createElector({
    backend: "k8s-lease",
    component: "compute",
    identity: "compute-0",
    timings,
    lockName: leaseName("metrics"),
    kube: { kubeconfig, namespace: testNamespace.name },
    registry,
  });
  await elector.start();
  expect(await value(registry, "svc_election_is_leader")).toBe(1);
  expect(await value(registry, "svc_election_term")).toBe(elector.currentTerm() ?? -2);
  expect(await value(registry, "svc_election_leadership_changes_total")).toBe(1);
  await elector.stop();
  expect(await value(registry, "svc_election_is_leader")).toBe(0);
  expect(await registry.metrics()).toContain(
    'svc_election_leadership_changes_total{component="compute",backend="k8s-lease",change="released"} 1',
  );
});

test("an apiserver that hangs up: attempts fail with their timeout, counted, and the replica never leads", async () => {
  const listener = hangUpListener();
  try {
    const broken = new KubeConfig();
    broken.loadFromOptions({
      clusters: [{ name: "c", server: listener.url, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const registry = new Registry();
    const errors: unknown[] = [];
    const elector = createElector({
      backend: "k8s-lease",
      component: "compute",
      identity: "compute-1",
      timings,
      kube: { kubeconfig: broken, namespace: "default" },
      registry,
      onAttemptError: (error) => errors.push(error),
    });
    await elector.start();
    await waitFor(
      "three failed attempts",
      async () => (((await value(registry, "svc_election_attempt_failures_total")) ?? 0) >= 3 ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    expect(elector.isServing()).toBe(false);
    expect(await value(registry, "svc_election_is_leader")).toBe(0);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    await elector.stop();
  } finally {
    listener.stop();
  }
});

test("failures while leading count as renew failures too; the deadline then ends the leadership (lost)", async () => {
  // A scripted lock (as in lease-elector.test.ts): granted once, then every renewal is refused by a broken server.
  // Not the stack's apiserver: it cannot be made to grant a Lease and then fail the renewals on demand (the
  // hang-up listener of the test above fails every attempt, so its replica never leads).
  let grants = 1;
  const lock: LeaseLock = {
    description: "scripted",
    async tryAcquireOrRenew(): Promise<LeaseAttempt> {
      if (grants-- > 0) return { leader: true, holder: "compute-2", term: 4 };
      throw new Error("503 from the apiserver");
    },
    async release() {},
  };
  const registry = new Registry();
  let metrics: ElectionMetrics | undefined;
  const elector = new LeaseElector({
    backend: "k8s-lease",
    identity: "compute-2",
    lock,
    timings: { leaseDurationSeconds: 1, renewDeadlineSeconds: 0.5, retryPeriodSeconds: 0.1 },
    onAttemptError: () => metrics?.countFailure(),
  });
  metrics = new ElectionMetrics(registry, elector, "compute");
  await elector.start();
  expect(await value(registry, "svc_election_is_leader")).toBe(1);
  expect(await value(registry, "svc_election_renew_failures_total")).toBe(0);
  // `isServing()` turns false when the deadline passes (it reads the clock); the `lost` change is counted when the
  // deadline's timer fires, a moment later: wait for the count, then check both.
  const lost = 'svc_election_leadership_changes_total{component="compute",backend="k8s-lease",change="lost"} 1';
  await waitFor(
    "leadership lost and counted",
    async () => ((await registry.metrics()).includes(lost) ? true : undefined),
    {
      timeoutMs: 3_000,
      intervalMs: 20,
    },
  );
  expect(elector.isServing()).toBe(false);
  const renewFailures = (await value(registry, "svc_election_renew_failures_total")) ?? 0;
  expect(renewFailures).toBeGreaterThanOrEqual(2);
  expect(await value(registry, "svc_election_attempt_failures_total")).toBeGreaterThanOrEqual(renewFailures);
  expect(await registry.metrics()).toContain(lost);
  await elector.stop();
});
