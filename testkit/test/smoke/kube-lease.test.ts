import { afterAll, expect, test } from "bun:test";
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, V1MicroTime } from "@kubernetes/client-node";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { createTestNamespace, leaseName, randomName, stackEnv } from "@svc/testkit";

const kubeconfig = loadKubeConfig(stackEnv().kubeconfig);
const core = makeKubeClient(kubeconfig, CoreV1Api);
const coordination = makeKubeClient(kubeconfig, CoordinationV1Api);
const testNamespace = await createTestNamespace(kubeconfig, "smoke");
const namespace = testNamespace.name;
afterAll(async () => {
  await testNamespace.remove();
});

test("a coordination.k8s.io/v1 Lease is created, renewed and read back", async () => {
  const name = leaseName("smoke");
  const acquired = new V1MicroTime(Date.now() - 1000);
  const created = await coordination.createNamespacedLease({
    namespace,
    body: {
      metadata: { name },
      spec: { holderIdentity: "pod-a", leaseDurationSeconds: 15, acquireTime: acquired, renewTime: acquired },
    },
  });
  expect(created.spec?.holderIdentity).toBe("pod-a");

  const renewedAt = new V1MicroTime(Date.now());
  const renewed = await coordination.replaceNamespacedLease({
    name,
    namespace,
    body: { ...created, spec: { ...created.spec, renewTime: renewedAt } },
  });
  expect(renewed.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);

  const read = await coordination.readNamespacedLease({ name, namespace });
  expect(read.spec?.holderIdentity).toBe("pod-a");
  expect(read.spec?.leaseDurationSeconds).toBe(15);
  // The apiserver keeps microseconds; the client may hand the time back as a string or a Date.
  expect(new Date(String(read.spec?.renewTime)).getTime()).toBe(renewedAt.getTime());
});

test("a label is merge-patched onto a Pod object", async () => {
  const name = randomName("pod");
  await core.createNamespacedPod({
    namespace,
    body: { metadata: { name, labels: { app: "smoke" } }, spec: { containers: [{ name: "c", image: "none" }] } },
  });
  const patched = await core.patchNamespacedPod(
    { name, namespace, body: { metadata: { labels: { "svc.ai/backend-leader": "true" } } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  expect(patched.metadata?.labels).toEqual({ app: "smoke", "svc.ai/backend-leader": "true" });
});

test("a test namespace is really gone after remove (no controller-manager runs here)", async () => {
  const scratch = await createTestNamespace(kubeconfig, "scratch");
  await coordination.createNamespacedLease({
    namespace: scratch.name,
    body: { metadata: { name: leaseName() }, spec: { holderIdentity: "pod-a" } },
  });
  await scratch.remove();
  const names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
  expect(names).not.toContain(scratch.name);
});
