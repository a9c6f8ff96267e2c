import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { V1Container, V1PodSpec, V1Probe, V1Role, V1RoleBinding } from "@kubernetes/client-node";
import { parseAuthConfig, parseServiceCredentials } from "@svc/auth";
import { BACKEND } from "@svc/backend";
import { serveMetrics } from "@svc/common";
import { type DeployedComponent, type DeploymentSettings, deploymentEnv, HA_COMPONENTS } from "@svc/component-runtime";
import { COMPUTE } from "@svc/compute";
import { type ComponentProfile, leaderLabelOf } from "@svc/election";
import { ENDPOINT } from "@svc/endpoint";
import { HealthState, healthRoutes } from "@svc/health";
import { ORCHESTRATOR, parseOrchestratorConfig } from "@svc/orchestrator";
import { SHAPER, SHAPER_TERMINATION_GRACE_SECONDS } from "@svc/shaper";
import { jscHeapEnv } from "@svc/stack";
import { tempDir } from "@svc/testkit";
import { CHART_DIR, KUBE_VERSION, runHelm, setArgs, templateChart } from "../index.ts";
import {
  container,
  containersOf,
  find,
  type Manifest,
  mountedSecretItem,
  type PodFacts,
  parseManifests,
  podSpec,
  probePort,
  processEnv,
  serviceOf,
  workload,
} from "./support/manifests.ts";
import { knownNames, SERVICES } from "./support/services.ts";

// A render needs the two required values; everything else is the chart's defaults.
const REQUIRED = { "idp.issuer": "https://idp.example.com/realms/svc", "kafka.brokers": "kafka-0.kafka:9092" };
const PROFILES: Record<string, ComponentProfile> = {
  orchestrator: ORCHESTRATOR,
  backend: BACKEND,
  compute: COMPUTE,
  shaper: SHAPER,
};
const RELEASE = "svc";
const manifests = parseManifests(await templateChart({ release: RELEASE, namespace: "svc-prod", set: REQUIRED }));
const name = (component: string) => `${RELEASE}-${component}`;

/** Every workload of the render with its Pod spec. */
const workloads = manifests.filter((m) => m.kind === "Deployment" || m.kind === "StatefulSet");

/** Secret values for the parsers: long enough for every minimum (page token key 32, passphrase 12). */
const secretValue = (secret: string, key: string) =>
  key.includes("url")
    ? `postgres://svc:pw@postgres.${secret}:5432/svc`
    : `${secret}-${key}-0123456789abcdef0123456789abcdef`;

const files = await tempDir("helm-env");
afterAll(() => files.remove());

/**
 * A container's env as its process gets it, with each `*_FILE` that a Secret volume provides written to a temp
 * file (the mount's contents), so the service's own parser reads it as in the Pod.
 */
async function envOf(spec: V1PodSpec, c: V1Container, pod: string): Promise<Record<string, string>> {
  const facts: PodFacts = { pod, podIp: "10.2.3.4", namespace: "svc-prod", secret: secretValue };
  const env = processEnv(c, facts);
  for (const [variable, path] of Object.entries(env)) {
    if (!variable.endsWith("_FILE") || !path.startsWith("/etc/")) continue;
    const item = mountedSecretItem(spec, c, path);
    if (!item) throw new Error(`${c.name}: ${variable}=${path} is on no Secret mount`);
    const local = join(files.path, `${pod}-${c.name}-${variable}`);
    await Bun.write(local, `${secretValue(item.secret, item.key)}\n`);
    env[variable] = local;
  }
  return env;
}

/** A container's env as the manifest sets it (literal values; references are undefined). */
const envOfContainer = (c: V1Container) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));

/** The stderr of a render of `set` that helm refuses (a non-zero exit). */
async function failed(set: Record<string, string>): Promise<string> {
  const run = await runHelm(["template", RELEASE, CHART_DIR, "--kube-version", KUBE_VERSION, ...setArgs(set)]);
  expect(run.code).not.toBe(0);
  return run.stderr;
}

test("helm lint passes on the chart with the required values", async () => {
  const run = await runHelm(["lint", "--strict", "--kube-version", KUBE_VERSION, CHART_DIR, ...setArgs(REQUIRED)]);
  expect(run.stderr + run.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
  expect(run.code).toBe(0);
});

test("the render refuses a missing issuer, missing brokers and a non-cluster election backend, naming the value", async () => {
  expect(await failed({ "kafka.brokers": "k:9092" })).toContain("idp.issuer is required");
  expect(await failed({ "idp.issuer": REQUIRED["idp.issuer"] })).toContain("kafka.brokers is required");
  // values.schema.json: election backends per component (spec: Limits), and no unknown (mistyped) keys
  expect(await failed({ ...REQUIRED, "orchestrator.election.backend": "postgres" })).toContain(
    "at '/orchestrator/election/backend': value must be 'k8s-lease'",
  );
  expect(await failed({ ...REQUIRED, "shaper.election.backend": "single-node" })).toContain(
    "at '/shaper/election/backend': value must be one of 'k8s-lease', ''",
  );
  expect(await failed({ ...REQUIRED, "endpont.replicas": "3" })).toContain(
    "additional properties 'endpont' not allowed",
  );
  // the templates check it again when the schema is skipped
  const unchecked = await runHelm([
    "template",
    RELEASE,
    CHART_DIR,
    "--skip-schema-validation",
    "--kube-version",
    KUBE_VERSION,
    ...setArgs({ ...REQUIRED, "backend.election.backend": "single-node" }),
  ]);
  expect(unchecked.stderr).toContain("backend.election.backend must be k8s-lease in a cluster");
});

test("the render has every service: the HA components, endpoint, the KMS, both audit writers and the audit API", () => {
  const services = new Set(workloads.flatMap((w) => containersOf(podSpec(w)).map(serviceOf)));
  expect([...services].sort()).toEqual(Object.keys(SERVICES).sort());
  expect(workload(manifests, name("endpoint")).spec?.replicas).toBe(2);
  for (const component of HA_COMPONENTS) expect(workload(manifests, name(component)).spec?.replicas).toBe(2);
});

describe("each HA component", () => {
  for (const component of HA_COMPONENTS) {
    const profile = PROFILES[component] as ComponentProfile;

    test(`${component}: its Service selects the leader label the elector writes, on its own Pods`, () => {
      const service = find(manifests, "Service", name(component));
      const selector = (service.spec as { selector: Record<string, string> }).selector;
      expect(profile.election?.leaderLabel).toBe(leaderLabelOf(component));
      expect(selector[leaderLabelOf(component)]).toBe("true");
      // endpoint's discovery lists `app=<component>`; the Service must select the same Pods the workload makes.
      expect(selector.app).toBe(component);
      const podLabels = (
        workload(manifests, name(component)).spec as { template: { metadata: { labels: Record<string, string> } } }
      ).template.metadata.labels;
      for (const [key, value] of Object.entries(selector)) {
        if (key !== leaderLabelOf(component)) expect(podLabels[key]).toBe(value);
      }
    });

    test(`${component}: k8s-lease, the Lease's namespace and the Pod's identity come from the downward API`, () => {
      const c = container(podSpec(workload(manifests, name(component))), component);
      const byName = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
      expect(byName.SVC_ELECTION_BACKEND?.value).toBe("k8s-lease");
      expect(byName.SVC_POD_NAME?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.name");
      expect(byName.SVC_ELECTION_NAMESPACE?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
      expect(byName.SVC_ADVERTISE_HOST?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP");
    });

    test(`${component}: PodDisruptionBudget as the profile says (spec: minAvailable 1, none for the shaper)`, () => {
      const pdb = manifests.find((m) => m.kind === "PodDisruptionBudget" && m.metadata.name === name(component));
      if (profile.pdbMinAvailable === undefined) {
        expect(pdb).toBeUndefined();
      } else {
        expect(pdb?.spec?.minAvailable).toBe(profile.pdbMinAvailable);
      }
    });
  }
});

test("the shaper: grace period 120 s on the Pod and in its own setting; SIGTERM releases the Lease, so no preStop", () => {
  const spec = podSpec(workload(manifests, name("shaper")));
  expect(spec.terminationGracePeriodSeconds).toBe(SHAPER_TERMINATION_GRACE_SECONDS);
  const c = container(spec, "shaper");
  expect(c.env?.find((e) => e.name === "SVC_SHAPER_TERMINATION_GRACE_SECONDS")?.value).toBe(
    String(SHAPER_TERMINATION_GRACE_SECONDS),
  );
  expect(c.lifecycle?.preStop).toBeUndefined();
});

test("compute and shaper on k8s-lease are StatefulSets (stable identity); without HA they are Deployments with no leader selector", async () => {
  expect(workload(manifests, name("compute")).kind).toBe("StatefulSet");
  expect(workload(manifests, name("shaper")).kind).toBe("StatefulSet");
  expect(workload(manifests, name("orchestrator")).kind).toBe("Deployment");
  const noHa = parseManifests(
    await templateChart({ set: { ...REQUIRED, "compute.election.backend": "", "shaper.election.backend": "" } }),
  );
  for (const component of ["compute", "shaper"]) {
    expect(workload(noHa, name(component)).kind).toBe("Deployment");
    const selector = (find(noHa, "Service", name(component)).spec as { selector: Record<string, string> }).selector;
    expect(selector[leaderLabelOf(component)]).toBeUndefined();
    expect(podSpec(workload(noHa, name(component))).automountServiceAccountToken).toBe(false);
  }
  const binding = find(noHa, "RoleBinding", `${RELEASE}-election`) as unknown as V1RoleBinding;
  expect(binding.subjects?.map((s) => s.name).sort()).toEqual([name("backend"), name("orchestrator")]);
});

/** Names read by Bun itself, not by a service's settings: JavaScriptCore's heap sizing (agent, queue-consumer). */
const RUNTIME_NAMES = new Set(["BUN_JSC_forceRAMSize"]);

describe("every container's env", () => {
  for (const w of workloads) {
    const spec = podSpec(w);
    for (const c of containersOf(spec)) {
      const service = serviceOf(c);
      test(`${w.metadata.name}/${c.name}: every name is one ${service}'s settings read, and they parse`, async () => {
        const serviceSpec = SERVICES[service];
        if (!serviceSpec) throw new Error(`no service ${service}`);
        const known = knownNames(serviceSpec);
        const env = await envOf(spec, c, `${w.metadata.name}-0`);
        // the service's own parser accepts them (a bad value throws naming its variable)
        serviceSpec.parse(env);
        // The service-to-service credentials are read beside the schemas, by @svc/auth's parseServiceCredentials:
        // they count as known when it returns exactly the client id and the mounted secret for them.
        const credentials = Object.keys(env).filter((n) => n.startsWith("SVC_AUTH_CLIENT_"));
        if (credentials.length > 0) {
          const parsedCredentials = parseServiceCredentials(env, parseAuthConfig(env));
          const file = env.SVC_AUTH_CLIENT_SECRET_FILE as string;
          expect(parsedCredentials).toEqual({
            clientId: env.SVC_AUTH_CLIENT_ID as string,
            clientSecret: (await Bun.file(file).text()).trim(),
          });
        }
        const unknown = Object.keys(env).filter(
          (n) => n !== "HOSTNAME" && !RUNTIME_NAMES.has(n) && !known.has(n) && !credentials.includes(n),
        );
        expect(unknown).toEqual([]);
      });
    }
  }
});

describe("ports and probes are the services' own", () => {
  /** Status of `path` on the real health router of the components, for a replica in `role`. */
  const healthStatus = async (path: string, role: "leader" | "follower" | "active") => {
    const state = new HealthState("probe", "probe-0", role);
    state.markInitialized();
    return (await healthRoutes(state).handle(new Request(`http://health${path}`))).status;
  };
  /** Status of `path` on the pipeline's metrics server (agent, queue-consumer), healthy. */
  const metricsStatus = async (path: string) => {
    const server = serveMetrics({
      host: "127.0.0.1",
      port: 0,
      registry: { metrics: async () => "", contentType: "text/plain" },
      health: () => ({ healthy: true, body: {} }),
      listenError: (_address, cause) => cause as Error,
    });
    try {
      return (await fetch(`${server.url}${path}`)).status;
    } finally {
      await server.stop();
    }
  };

  for (const w of workloads) {
    const spec = podSpec(w);
    for (const c of containersOf(spec)) {
      const service = serviceOf(c);
      test(`${w.metadata.name}/${c.name}: each container port is where ${service} listens, each probe hits one and a real route`, async () => {
        const parsed = (SERVICES[service] as NonNullable<(typeof SERVICES)[string]>).parse(
          await envOf(spec, c, `${w.metadata.name}-0`),
        );
        const declared = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
        expect(declared).toEqual(parsed.ports);
        const probes = [c.startupProbe, c.livenessProbe, c.readinessProbe].filter((p): p is V1Probe => !!p);
        expect(probes.length).toBeGreaterThan(0);
        for (const probe of probes) {
          expect(Object.values(parsed.ports)).toContain(probePort(c, probe));
          expect(probe.httpGet?.scheme ?? "HTTP").toBe(parsed.scheme ?? "HTTP");
          const path = probe.httpGet?.path ?? "";
          const status = ["agent", "queue-consumer"].includes(service)
            ? await metricsStatus(path)
            : await healthStatus(path, "leader");
          expect({ path, status }).toEqual({ path, status: 200 });
        }
      });
    }
  }

  test("the agent and the audit writers: liveness is answered while /health is 503 (Kafka away), readiness is /health", async () => {
    const unhealthy = serveMetrics({
      host: "127.0.0.1",
      port: 0,
      registry: { metrics: async () => "", contentType: "text/plain" },
      health: () => ({ healthy: false, body: { code: "AGENT_KAFKA_UNAVAILABLE" } }),
      listenError: (_address, cause) => cause as Error,
    });
    try {
      const status = async (path: string) => (await fetch(`${unhealthy.url}${path}`)).status;
      for (const [workloadName, c] of [
        [name("endpoint"), "audit-agent"],
        [name("kms"), "audit-agent"],
        [name("queue-consumer-audit"), "queue-consumer"],
      ] as const) {
        const probes = container(podSpec(workload(manifests, workloadName)), c);
        const liveness = probes.livenessProbe?.httpGet?.path ?? "";
        expect({ c, liveness, status: await status(liveness) }).toEqual({ c, liveness, status: 200 });
        const readiness = probes.readinessProbe?.httpGet?.path;
        if (readiness !== undefined) expect({ c, status: await status(readiness) }).toEqual({ c, status: 503 });
      }
    } finally {
      await unhealthy.stop();
    }
  });

  test("HA components: the readiness probe admits an initialized follower (spec: /health/pod-ready), liveness too", async () => {
    for (const component of HA_COMPONENTS) {
      const c = container(podSpec(workload(manifests, name(component))), component);
      expect(await healthStatus(c.readinessProbe?.httpGet?.path ?? "", "follower")).toBe(200);
      expect(await healthStatus(c.livenessProbe?.httpGet?.path ?? "", "follower")).toBe(200);
    }
  });

  test("endpoint: the readiness probe is the gated one — 503 while backend does not serve, 200 once it does", async () => {
    const c = container(podSpec(workload(manifests, name("endpoint"))), "endpoint");
    const ready = c.readinessProbe?.httpGet?.path ?? "";
    // endpoint's gate shows a replica as `follower` while no backend serves (startReplica's `gate`).
    expect(await healthStatus(ready, "follower")).toBe(503);
    expect(await healthStatus(ready, "active")).toBe(200);
    expect(await healthStatus(c.livenessProbe?.httpGet?.path ?? "", "follower")).toBe(200);
    expect(probePort(c, c.readinessProbe as V1Probe)).not.toBe(ENDPOINT.grpcPort as number);
    const service = find(manifests, "Service", name("endpoint"));
    expect((service.spec as { ports: { port: number }[] }).ports.map((p) => p.port)).toContain(
      ENDPOINT.grpcPort as number,
    );
  });
});

test("the audit API's Service: gRPC 50052 and the REST port; endpoint's agent ships the file endpoint writes", () => {
  const api = find(manifests, "Service", name("audit-api"));
  const ports = (api.spec as { ports: { name: string; port: number }[] }).ports;
  expect(ports.find((p) => p.name === "grpc")?.port).toBe(50052);
  expect(ports.find((p) => p.name === "rest")?.port).toBe(8052);
  const spec = podSpec(workload(manifests, name("endpoint")));
  const endpointEnv = envOfContainer(container(spec, "endpoint"));
  const agent = container(spec, "audit-agent");
  const agentEnv = envOfContainer(agent);
  expect(endpointEnv.SVC_AUDIT_LOG_SINK).toBe("file");
  expect(agentEnv.SVC_AGENT_SOURCE).toBe(endpointEnv.SVC_AUDIT_LOG_FILE);
  // a native sidecar: started before endpoint, stopped after it
  expect(agent.restartPolicy).toBe("Always");
  const mountOf = (c: V1Container) =>
    c.volumeMounts?.find((m) => (endpointEnv.SVC_AUDIT_LOG_FILE ?? "").startsWith(`${m.mountPath}/`));
  expect(mountOf(agent)?.name).toBe(mountOf(container(spec, "endpoint"))?.name);
  expect(spec.volumes?.find((v) => v.name === mountOf(agent)?.name)?.emptyDir).toBeDefined();
});

describe("the audit logs of endpoint and the KMS", () => {
  const pods = [
    { workloadName: name("endpoint"), main: "endpoint", writer: name("queue-consumer-audit") },
    { workloadName: name("kms"), main: "kms", writer: name("queue-consumer-kms-audit") },
  ];

  test("each agent ships to the topic its writer reads, and the emitter rotates its file within the emptyDir", () => {
    for (const { workloadName, main, writer } of pods) {
      const spec = podSpec(workload(manifests, workloadName));
      const agent = envOfContainer(container(spec, "audit-agent"));
      const writerEnv = envOfContainer(container(podSpec(workload(manifests, writer)), "queue-consumer"));
      expect({ workloadName, topic: agent.SVC_AGENT_TOPIC }).toEqual({
        workloadName,
        topic: writerEnv.SVC_AUDIT_TOPIC,
      });
      const emitter = envOfContainer(container(spec, main));
      const [bytes, keep] = [Number(emitter.SVC_AUDIT_LOG_ROTATE_BYTES), Number(emitter.SVC_AUDIT_LOG_ROTATE_KEEP)];
      expect(bytes).toBeGreaterThan(0);
      const mount = container(spec, main).volumeMounts?.find((m) => m.name === "audit");
      expect(agent.SVC_AGENT_SOURCE?.startsWith(`${mount?.mountPath}/`)).toBe(true);
      const sizeLimit = String(spec.volumes?.find((v) => v.name === "audit")?.emptyDir?.sizeLimit);
      const limitBytes = Number.parseInt(sizeLimit, 10) * (sizeLimit.endsWith("Gi") ? 2 ** 30 : 2 ** 20);
      expect((keep + 1) * bytes).toBeLessThan(limitBytes);
    }
  });

  test("the Pod's grace period covers the main container's stop, then the agent's read-on, drain and last checkpoint", () => {
    const agentDrainSeconds = 20 + 2; // SVC_AGENT_SHUTDOWN_TIMEOUT_MS's default, the final checkpoint's bound
    const mainStopSeconds = { endpoint: 10, kms: 5 } as const;
    for (const { workloadName, main } of pods) {
      const spec = podSpec(workload(manifests, workloadName));
      const readOnSeconds = Number(envOfContainer(container(spec, "audit-agent")).SVC_AGENT_STOP_READ_MS) / 1000;
      expect(readOnSeconds).toBeGreaterThan(0);
      expect(spec.terminationGracePeriodSeconds ?? 30).toBeGreaterThan(
        mainStopSeconds[main as keyof typeof mainStopSeconds] + readOnSeconds + agentDrainSeconds,
      );
    }
  });

  test("the render refuses rotated files that would not fit the emptyDir, and a KMS whose audit writer is off", async () => {
    expect(await failed({ ...REQUIRED, "endpoint.audit.rotateKeep": "10" })).toContain(
      "endpoint.audit: (rotateKeep + 1) × rotateBytes must be below volumeSizeLimit (1Gi)",
    );
    expect(await failed({ ...REQUIRED, "kms.audit.volumeSizeLimit": "256Mi" })).toContain(
      "kms.audit: (rotateKeep + 1) × rotateBytes must be below volumeSizeLimit (256Mi)",
    );
    expect(await failed({ ...REQUIRED, "queueConsumer.writers.kmsAudit.enabled": "false" })).toContain(
      "kms.enabled needs queueConsumer.writers.kmsAudit.enabled",
    );
  });

  test("rotation off (rotateBytes 0): no rotation settings, the file is left to an outside rotator", async () => {
    const off = parseManifests(await templateChart({ set: { ...REQUIRED, "endpoint.audit.rotateBytes": "0" } }));
    const emitter = envOfContainer(container(podSpec(workload(off, name("endpoint"))), "endpoint"));
    expect(emitter.SVC_AUDIT_LOG_ROTATE_BYTES).toBeUndefined();
    expect(emitter.SVC_AUDIT_LOG_ROTATE_KEEP).toBeUndefined();
  });
});

test("the audit API's block cache: its disk tier in an emptyDir sized above its budget; off, neither env nor volume", async () => {
  const envOf = (spec: V1PodSpec) => envOfContainer(container(spec, "audit-api"));
  const spec = podSpec(workload(manifests, name("audit-api")));
  const env = envOf(spec);
  const dir = env.SVC_AUDIT_API_DISK_CACHE_DIR as string;
  const mount = container(spec, "audit-api").volumeMounts?.find((m) => m.mountPath === dir);
  const volume = spec.volumes?.find((v) => v.name === mount?.name);
  const sizeLimit = String(volume?.emptyDir?.sizeLimit);
  expect(sizeLimit).toMatch(/^\d+Mi$/);
  expect(Number.parseInt(sizeLimit, 10) * 1048576).toBeGreaterThan(Number(env.SVC_AUDIT_API_DISK_CACHE_BYTES));
  expect(Number(env.SVC_AUDIT_API_OBJECT_CACHE_BYTES)).toBeGreaterThan(0);

  const off = parseManifests(await templateChart({ set: { ...REQUIRED, "auditApi.diskCache.enabled": "false" } }));
  const offSpec = podSpec(workload(off, name("audit-api")));
  expect(envOf(offSpec).SVC_AUDIT_API_DISK_CACHE_DIR).toBeUndefined();
  expect(offSpec.volumes?.map((v) => v.name)).toEqual(["tmp"]);
});

test("each audit writer spools its batches to an emptyDir of its own, sized above its buffer cap", () => {
  for (const writer of ["queue-consumer-audit", "queue-consumer-kms-audit"]) {
    const spec = podSpec(workload(manifests, name(writer)));
    const consumer = container(spec, "queue-consumer");
    const dir = consumer.env?.find((e) => e.name === "SVC_AUDIT_SPOOL_DIR")?.value;
    const mount = consumer.volumeMounts?.find((m) => m.mountPath === dir);
    const sizeLimit = String(spec.volumes?.find((v) => v.name === mount?.name)?.emptyDir?.sizeLimit);
    expect(sizeLimit).toMatch(/^\d+Mi$/);
    // The writer's default cap: 6 batches of SVC_AUDIT_BATCH_MAX_BYTES (16 MiB), plus a 4 MiB fetch answer.
    expect(Number.parseInt(sizeLimit, 10)).toBeGreaterThan(6 * 16 + 4);
  }
});

test("the agent and the audit writers: JavaScriptCore's heap sized as the local stack sizes it, not for the node's RAM", () => {
  const sized = jscHeapEnv().BUN_JSC_forceRAMSize;
  const agent = container(podSpec(workload(manifests, name("endpoint"))), "audit-agent");
  expect(envOfContainer(agent).BUN_JSC_forceRAMSize).toBe(sized);
  for (const writer of ["queue-consumer-audit", "queue-consumer-kms-audit"]) {
    const env = envOfContainer(container(podSpec(workload(manifests, name(writer))), "queue-consumer"));
    expect(env.BUN_JSC_forceRAMSize).toBe(sized);
  }
});

describe("RBAC", () => {
  const role = find(manifests, "Role", `${RELEASE}-election`) as unknown as V1Role;
  const binding = find(manifests, "RoleBinding", `${RELEASE}-election`) as unknown as V1RoleBinding;
  const verbsOf = (r: V1Role, group: string, resource: string) =>
    (r.rules ?? [])
      .filter((rule) => rule.apiGroups?.includes(group) && rule.resources?.includes(resource))
      .flatMap((rule) => rule.verbs);

  test("the election Role grants at least ops/k8s/election-rbac.yaml's rules (the ones its test runs the elector under), plus watch", async () => {
    const file = join(import.meta.dir, "../../k8s/election-rbac.yaml");
    const [reference] = Bun.YAML.parse(await Bun.file(file).text()) as [V1Role];
    for (const rule of reference.rules ?? []) {
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          expect(verbsOf(role, group, resource)).toEqual(expect.arrayContaining(rule.verbs));
        }
      }
    }
    // A follower watches the Lease (K8sLeaseLock.watch); endpoint and operators watch the Pods.
    expect(verbsOf(role, "coordination.k8s.io", "leases")).toContain("watch");
    expect(verbsOf(role, "", "pods")).toEqual(expect.arrayContaining(["get", "list", "watch", "patch"]));
    expect(verbsOf(role, "coordination.k8s.io", "leases")).not.toContain("delete");
  });

  test("every HA component runs as a ServiceAccount the election RoleBinding binds; endpoint's may list Pods", () => {
    for (const component of HA_COMPONENTS) {
      const spec = podSpec(workload(manifests, name(component)));
      expect(spec.serviceAccountName).toBe(name(component));
      expect(spec.automountServiceAccountToken).toBe(true);
      expect(binding.subjects).toContainEqual({ kind: "ServiceAccount", name: name(component), namespace: "svc-prod" });
      find(manifests, "ServiceAccount", name(component));
    }
    const discovery = find(manifests, "Role", `${RELEASE}-discovery`) as unknown as V1Role;
    expect(verbsOf(discovery, "", "pods")).toContain("list");
    const discoveryBinding = find(manifests, "RoleBinding", `${RELEASE}-discovery`) as unknown as V1RoleBinding;
    expect(discoveryBinding.subjects?.map((s) => s.name)).toEqual([
      podSpec(workload(manifests, name("endpoint"))).serviceAccountName as string,
    ]);
  });
});

test("Secrets are referenced, never created: the IdP client secret as a file, PostgreSQL and S3 credentials by key", () => {
  expect(manifests.filter((m: Manifest) => m.kind === "Secret")).toEqual([]);
  const spec = podSpec(workload(manifests, name("backend")));
  const c = container(spec, "backend");
  const file = c.env?.find((e) => e.name === "SVC_AUTH_CLIENT_SECRET_FILE")?.value ?? "";
  expect(mountedSecretItem(spec, c, file)).toEqual({ secret: "svc-idp-components", key: "client-secret" });
  expect(c.env?.find((e) => e.name === "SVC_AUTH_CLIENT_SECRET")).toBeUndefined();
  const refs = Object.fromEntries(
    (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [[e.name, e.valueFrom.secretKeyRef.name]] : [])),
  );
  expect(refs).toEqual({
    SVC_COMPONENTS_PG_URL: "svc-postgres",
    SVC_COMPONENTS_S3_ACCESS_KEY: "svc-s3",
    SVC_COMPONENTS_S3_SECRET_KEY: "svc-s3",
  });
});

test("each Pod's container ports are distinct (the sidecar's beside the service's)", () => {
  for (const w of workloads) {
    const ports = containersOf(podSpec(w)).flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
    expect({ workload: w.metadata.name, ports: [...new Set(ports)].length }).toEqual({
      workload: w.metadata.name,
      ports: ports.length,
    });
  }
});

test("Lease timing overrides reach the elector; by default the components' own (the spec's) apply", async () => {
  const timingsOf = async (m: Manifest[]) => {
    const spec = podSpec(workload(m, name("orchestrator")));
    const c = container(spec, "orchestrator");
    return parseOrchestratorConfig(await envOf(spec, c, "orchestrator-0")).replica.timings;
  };
  expect(await timingsOf(manifests)).toEqual(
    ORCHESTRATOR.election?.lease as NonNullable<typeof ORCHESTRATOR.election>["lease"],
  );
  const overridden = parseManifests(
    await templateChart({
      set: {
        ...REQUIRED,
        "orchestrator.lease.leaseDurationSeconds": "9",
        "orchestrator.lease.renewDeadlineSeconds": "6",
        "orchestrator.lease.retryPeriodSeconds": "1.5",
      },
    }),
  );
  expect(await timingsOf(overridden)).toEqual({
    leaseDurationSeconds: 9,
    renewDeadlineSeconds: 6,
    retryPeriodSeconds: 1.5,
  });
});

test("every setting the local deployment gives a component (deploymentEnv) is set by the chart too", async () => {
  // The local deployment's settings, spec timings; only the shape matters here.
  const settings = {
    namespace: "svc",
    kubeconfig: "/kubeconfig",
    pgUrl: "postgres://svc@pg/svc",
    schema: "svc_components",
    s3: { endpoint: "http://s3", region: "us-east-1", accessKey: "a", secretKey: "s", bucket: "b", prefix: "" },
    authIssuer: "https://idp/realms/svc",
    componentsClientSecret: "secret",
    grpcAddresses: { orchestrator: ["o:1"], shaper: ["s:1"] },
    timings: "spec",
  } as DeploymentSettings;
  // Outside a cluster they name the kubeconfig file; in a Pod the ServiceAccount's in-cluster config is used.
  const outsideOnly = new Set(["SVC_ELECTION_KUBECONFIG", "SVC_ENDPOINT_KUBECONFIG"]);
  const components: DeployedComponent[] = [...HA_COMPONENTS, "endpoint"];
  // The local deployment names its object store (MinIO); with s3.endpoint empty the chart leaves AWS's default.
  const withEndpoint = parseManifests(
    await templateChart({ set: { ...REQUIRED, "s3.endpoint": "https://s3.example.com" } }),
  );
  for (const component of components) {
    const c = container(podSpec(workload(withEndpoint, name(component))), component);
    const set = new Set((c.env ?? []).map((e) => e.name));
    const missing = Object.keys(deploymentEnv(component, settings)).filter(
      (variable) => !outsideOnly.has(variable) && !set.has(variable) && !set.has(`${variable}_FILE`),
    );
    expect({ component, missing }).toEqual({ component, missing: [] });
  }
});
