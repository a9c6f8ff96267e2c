import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import {
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { createElector, keepLeaderLabel, leaderLabelOf } from "@svc/election";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { createTestNamespace, leaseName, serviceAccountKubeConfig, stackEnv, tempDir } from "@svc/testkit";
import { runCommand, templateChart } from "../index.ts";
import { parseManifests } from "./support/manifests.ts";

// The stack's REAL kube-apiserver (RBAC on): the chart's objects are validated by it, and its RBAC objects are
// created for real so the elector can run under the chart's ServiceAccount.
const kubeconfigPath = stackEnv().kubeconfig;
const admin = loadKubeConfig(kubeconfigPath);
const core = makeKubeClient(admin, CoreV1Api);
const testNamespace = await createTestNamespace(admin, "helm");
const namespace = testNamespace.name;
const dir = await tempDir("helm-apply");
const RELEASE = "svc";
const yaml = await templateChart({
  release: RELEASE,
  namespace,
  set: { "idp.issuer": "https://idp.example.com/realms/svc", "kafka.brokers": "kafka-0.kafka:9092" },
});
const manifests = parseManifests(yaml);
const RBAC_KINDS = ["ServiceAccount", "Role", "RoleBinding"];
const rbacFile = join(dir.path, "rbac.yaml");
const rbacItems = manifests.filter((m) => RBAC_KINDS.includes(m.kind));
await Bun.write(rbacFile, JSON.stringify({ apiVersion: "v1", kind: "List", items: rbacItems }));

const kubectl = (...args: string[]) =>
  runCommand(["/usr/bin/kubectl", "--kubeconfig", kubeconfigPath, "-n", namespace, ...args]);

afterAll(async () => {
  await kubectl("delete", "--ignore-not-found", "-f", rbacFile);
  await testNamespace.remove();
  await dir.remove();
});

test("kubectl apply --dry-run=server: the apiserver accepts every rendered object", async () => {
  const file = join(dir.path, "all.yaml");
  await Bun.write(file, yaml);
  const run = await kubectl("apply", "--dry-run=server", "-f", file);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const accepted = run.stdout.split("\n").filter((line) => line.endsWith("(server dry run)"));
  expect(accepted.length).toBe(manifests.length);
  // and nothing was created
  const deployments = await kubectl("get", "deployments,statefulsets", "-o", "name");
  expect(deployments.stdout.trim()).toBe("");
});

test("a broken object is refused by the same dry run (the check can fail)", async () => {
  const file = join(dir.path, "broken.yaml");
  await Bun.write(file, yaml.replace(/^ {2}replicas: 2$/m, "  replicas: -2"));
  const run = await kubectl("apply", "--dry-run=server", "-f", file);
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain("spec.replicas: Invalid value: -2");
});

const allowed = async (kubeconfig: KubeConfig, attributes: V1ResourceAttributes) => {
  const review = await makeKubeClient(kubeconfig, AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { namespace, ...attributes } } },
  });
  return review.status?.allowed === true;
};

test("under the chart's ServiceAccount and Role, the real elector takes the Lease and sets the leader label", async () => {
  const applied = await kubectl("apply", "-f", rbacFile);
  expect(applied.stderr).toBe("");
  expect(applied.code).toBe(0);
  const account = `${RELEASE}-orchestrator`;
  const identity = await serviceAccountKubeConfig(admin, namespace, account);
  const label = leaderLabelOf("orchestrator");
  for (const pod of ["orchestrator-0", "orchestrator-1"]) {
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: pod, labels: { app: "orchestrator" } },
        spec: { containers: [{ name: "c", image: "none" }] },
      },
    });
  }
  const lockName = leaseName("helm");
  const elector = createElector({
    backend: "k8s-lease",
    component: "orchestrator",
    identity: "orchestrator-0",
    timings: { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 },
    lockName,
    kube: { kubeconfig: identity, namespace },
  });
  const errors: unknown[] = [];
  keepLeaderLabel(elector, {
    api: makeKubeClient(identity, CoreV1Api),
    namespace,
    pod: "orchestrator-0",
    label,
    retryMs: 250,
    requestTimeoutMs: 2000,
    onError: (error) => errors.push(error),
  });
  await elector.start();
  try {
    expect(elector.isServing()).toBe(true);
    await waitFor(
      "the leader label on orchestrator-0",
      async () => {
        const pods = await core.listNamespacedPod({ namespace, labelSelector: `${label}=true` });
        return pods.items.map((p) => p.metadata?.name).join() === "orchestrator-0" ? true : undefined;
      },
      { timeoutMs: 5000, intervalMs: 50 },
    );
    const lease = await makeKubeClient(admin, CoordinationV1Api).readNamespacedLease({ name: lockName, namespace });
    expect(lease.spec?.holderIdentity).toBe("orchestrator-0");
    expect(errors).toEqual([]);
  } finally {
    await elector.stop();
  }
  // The follower's watch of the Lease and the Pods' watch are granted; deleting a Lease is not.
  expect(await allowed(identity, { group: "coordination.k8s.io", resource: "leases", verb: "watch" })).toBe(true);
  expect(await allowed(identity, { resource: "pods", verb: "watch" })).toBe(true);
  expect(await allowed(identity, { group: "coordination.k8s.io", resource: "leases", verb: "delete" })).toBe(false);
  expect(await allowed(identity, { resource: "pods", verb: "delete" })).toBe(false);
});

test("endpoint's ServiceAccount lists the labelled Pods (its discovery) and cannot patch them", async () => {
  const applied = await kubectl("apply", "-f", rbacFile);
  expect(applied.stderr).toBe("");
  expect(applied.code).toBe(0);
  const identity = await serviceAccountKubeConfig(admin, namespace, `${RELEASE}-endpoint`);
  const pods = await makeKubeClient(identity, CoreV1Api).listNamespacedPod({
    namespace,
    labelSelector: `${leaderLabelOf("backend")}=true`,
  });
  expect(pods.items).toEqual([]);
  expect(await allowed(identity, { resource: "pods", verb: "list" })).toBe(true);
  expect(await allowed(identity, { resource: "pods", verb: "patch" })).toBe(false);
  expect(await allowed(identity, { group: "coordination.k8s.io", resource: "leases", verb: "update" })).toBe(false);
});
