import { afterAll, expect, test } from "bun:test";
import {
  ApiException,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  dumpYaml,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { createElector, keepLeaderLabel, leaderLabelOf } from "@svc/election";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { createTestNamespace, leaseName, serviceAccountKubeConfig, stackEnv } from "@svc/testkit";
import { templateChart } from "../index.ts";
import { parseManifests } from "./support/manifests.ts";

// The stack's REAL kube-apiserver (RBAC on), reached with client-node (no kubectl): the chart's objects are
// validated by it (a server-side dry run, what `kubectl apply --dry-run=server` asks for), and its RBAC objects
// are created for real so the elector can run under the chart's ServiceAccount.
const admin = loadKubeConfig(stackEnv().kubeconfig);
const core = makeKubeClient(admin, CoreV1Api);
const objects = makeKubeClient(admin, KubernetesObjectApi);
const testNamespace = await createTestNamespace(admin, "helm");
const namespace = testNamespace.name;
const RELEASE = "svc";
const yaml = await templateChart({
  release: RELEASE,
  namespace,
  set: { "idp.issuer": "https://idp.example.com/realms/svc", "kafka.brokers": "kafka-0.kafka:9092" },
});
const manifests = parseManifests(yaml);

/** The rendered objects as client-node types them, placed in the test namespace (helm template sets none). */
const typedObjects = (rendered: string): KubernetesObject[] =>
  loadAllYaml(rendered).map((object: KubernetesObject) => ({
    ...object,
    metadata: { ...object.metadata, namespace },
  }));

const RBAC_KINDS = ["ServiceAccount", "Role", "RoleBinding"];
const rbacObjects = typedObjects(yaml).filter((object) => RBAC_KINDS.includes(object.kind ?? ""));

/** The apiserver's own refusal (its Status message) of a failed request, or the error itself. */
function refusal(error: unknown): { code?: number; message: string } {
  if (!(error instanceof ApiException)) return { message: String(error) };
  const body: unknown = typeof error.body === "string" ? JSON.parse(error.body) : error.body;
  const message = (body as { message?: unknown } | null)?.message;
  return { code: error.code, message: typeof message === "string" ? message : String(error.body) };
}

type DryRun = { object: KubernetesObject; created?: KubernetesObject; refused?: { code?: number; message: string } };

/** Server-side dry run (`dryRun=All`) of a create of every object, one by one as kubectl sends them. */
async function dryRunCreate(toCreate: KubernetesObject[]): Promise<DryRun[]> {
  const runs: DryRun[] = [];
  for (const object of toCreate) {
    try {
      runs.push({ object, created: await objects.create(object, undefined, "All") });
    } catch (error) {
      runs.push({ object, refused: refusal(error) });
    }
  }
  return runs;
}

// The chart's ServiceAccounts, Roles and RoleBindings, created for real once (the last two tests both need them).
let rbacCreated: Promise<KubernetesObject[]> | undefined;
const createRbac = () => {
  rbacCreated ??= (async () => {
    const created: KubernetesObject[] = [];
    for (const object of rbacObjects) created.push(await objects.create(object));
    return created;
  })();
  return rbacCreated;
};

afterAll(async () => {
  for (const object of rbacObjects) {
    await objects.delete(object).catch((error: unknown) => {
      if (refusal(error).code !== 404) throw error;
    });
  }
  await testNamespace.remove();
});

test("client-node's typed model keeps every rendered field (nothing is dropped before the apiserver sees it)", () => {
  // KubernetesObjectApi serializes through client-node's models, which drop fields they do not know: a field the
  // apiserver would refuse as unknown (kubectl's strict validation) must not vanish on the way.
  const typed = loadAllYaml(yaml);
  expect(typed.length).toBe(manifests.length);
  typed.forEach((object, index) => {
    expect(Bun.YAML.parse(dumpYaml(object))).toEqual(manifests[index]);
  });
});

test("server-side dry run: the apiserver accepts every rendered object and creates none", async () => {
  const runs = await dryRunCreate(typedObjects(yaml));
  expect(runs.filter((run) => run.refused).map((run) => run.refused)).toEqual([]);
  expect(runs.length).toBe(manifests.length);
  for (const [index, run] of runs.entries()) {
    expect(`${run.created?.kind}/${run.created?.metadata?.name}`).toBe(
      `${manifests[index]?.kind}/${manifests[index]?.metadata.name}`,
    );
    expect(run.created?.metadata?.uid).toBeString(); // the apiserver's answer, not our object echoed back
  }
  // and nothing was created
  const deployments = await objects.list("apps/v1", "Deployment", namespace);
  const statefulSets = await objects.list("apps/v1", "StatefulSet", namespace);
  expect([...deployments.items, ...statefulSets.items].map((item) => item.metadata?.name)).toEqual([]);
  const accounts = await objects.list("v1", "ServiceAccount", namespace);
  const rendered = rbacObjects.filter((object) => object.kind === "ServiceAccount").map((o) => o.metadata?.name);
  expect(rendered.length).toBeGreaterThan(0);
  expect(accounts.items.map((item) => item.metadata?.name).filter((name) => rendered.includes(name))).toEqual([]);
});

test("a broken object is refused by the same dry run (the check can fail)", async () => {
  const runs = await dryRunCreate(typedObjects(yaml.replace(/^ {2}replicas: 2$/m, "  replicas: -2")));
  const refused = runs.filter((run) => run.refused);
  expect(refused.length).toBe(1);
  expect(refused[0]?.refused?.code).toBe(422);
  expect(refused[0]?.refused?.message).toContain("spec.replicas: Invalid value: -2");
  expect(runs.length - refused.length).toBe(manifests.length - 1);
});

const allowed = async (kubeconfig: KubeConfig, attributes: V1ResourceAttributes) => {
  const review = await makeKubeClient(kubeconfig, AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { namespace, ...attributes } } },
  });
  return review.status?.allowed === true;
};

test("under the chart's ServiceAccount and Role, the real elector takes the Lease and sets the leader label", async () => {
  const created = await createRbac();
  expect(created.map((object) => `${object.kind}/${object.metadata?.name}`)).toEqual(
    rbacObjects.map((object) => `${object.kind}/${object.metadata?.name}`),
  );
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
  const created = await createRbac();
  expect(created.map((object) => `${object.kind}/${object.metadata?.name}`)).toEqual(
    rbacObjects.map((object) => `${object.kind}/${object.metadata?.name}`),
  );
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
