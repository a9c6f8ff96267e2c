import { afterAll, expect, test } from "bun:test";
import { ApiException, CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { createTestNamespace, leaseName, stackEnv } from "@svc/testkit";
import { createElector, keepLeaderLabel, leaderLabelOf } from "../index.ts";
import { electionIdentity } from "./support/rbac-identity.ts";

const admin = loadKubeConfig(stackEnv().kubeconfig);
const core = makeKubeClient(admin, CoreV1Api);
const testNamespace = await createTestNamespace(admin, "label");
const namespace = testNamespace.name;
const identity = await electionIdentity(admin, namespace);
afterAll(async () => {
  await identity.remove();
  await testNamespace.remove();
});

const label = leaderLabelOf("orchestrator");
const timings = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

const createPod = (name: string, labels: Record<string, string> = {}) =>
  core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: { app: "orchestrator", ...labels } },
      spec: { containers: [{ name: "c", image: "none" }] },
    },
  });
const labelled = async () =>
  (await core.listNamespacedPod({ namespace, labelSelector: `${label}=true` })).items
    .map((p) => p.metadata?.name)
    .sort();

test("the new leader labels its own Pod and removes a crashed leader's label, with only the Role's permissions", async () => {
  await createPod("orch-0");
  await createPod("orch-1");
  await createPod("orch-old", { [label]: "true" });
  const lockName = leaseName("label");
  const elector = createElector({
    backend: "k8s-lease",
    component: "orchestrator",
    identity: "orch-0",
    timings,
    lockName,
    kube: { kubeconfig: identity.kubeconfig, namespace },
  });
  const errors: unknown[] = [];
  keepLeaderLabel(elector, {
    api: makeKubeClient(identity.kubeconfig, CoreV1Api),
    namespace,
    pod: "orch-0",
    label,
    retryMs: 250,
    requestTimeoutMs: 2000,
    onError: (e) => errors.push(e),
  });
  await elector.start();
  try {
    expect(elector.isServing()).toBe(true);
    await waitFor("the label to move", async () => ((await labelled()).join() === "orch-0" ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 50,
    });
    const lease = await makeKubeClient(admin, CoordinationV1Api).readNamespacedLease({ name: lockName, namespace });
    expect(lease.spec?.holderIdentity).toBe("orch-0");
    expect(errors).toEqual([]);
  } finally {
    await elector.stop();
  }
  // Released gracefully: its own label goes too.
  await waitFor("the label to go", async () => ((await labelled()).length === 0 ? true : undefined), {
    timeoutMs: 5000,
    intervalMs: 50,
  });
});

test("the Role grants no more than it needs: deleting a Lease is forbidden", async () => {
  const api = makeKubeClient(identity.kubeconfig, CoordinationV1Api);
  const error = await api.deleteNamespacedLease({ name: "anything", namespace }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiException);
  expect((error as ApiException<unknown>).code).toBe(403);
});
