/**
 * `up --services` (issue 10): two replicas of each HA component and two endpoints as servers of a stack of the
 * test's own — its state directory, ports, namespace, schema, key prefix and realm — on top of the servers the tests
 * run against (which it neither starts nor stops): the spec's expected state after `up`, each replica's role in
 * `status`, the printed call through endpoint, and `down` stopping every replica. With them the endpoints' audit
 * pipeline (an agent per endpoint, the writer, the audit API) on a topic, index schema and key prefix of the test's
 * own: the printed call's record is listed by the audit API with the printed command.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { V1MicroTime } from "@kubernetes/client-node";
import type { Admin } from "@platformatic/kafka";
import { isAlive } from "@svc/common";
import { loadKubeConfig } from "@svc/kube";
import {
  bucketPrefix,
  createTestNamespace,
  describeWithServers,
  ensureTool,
  randomName,
  rejectionOf,
  type SeededRealm,
  seedTestRealm,
  stackEnv,
  type TempDir,
  type TestNamespace,
  tempDir,
  thrownBy,
  waitFor,
} from "@svc/testkit";
import { SQL } from "bun";
import { auditPageTokenKeyFile, ensureAuditPageTokenKey } from "../src/audit-files.ts";
import { SERVICES_PORT_SPAN } from "../src/config.ts";
import type { StackContext } from "../src/context.ts";
import { createContext } from "../src/context-factory.ts";
import { livePid, spawnDaemon } from "../src/daemon.ts";
import { StackError } from "../src/errors.ts";
import { freePort, freePortSpan } from "../src/free-port.ts";
import { isPortFree } from "../src/port-check.ts";
import { isZombie } from "../src/proc-process.ts";
import { silentProgress } from "../src/progress.ts";
import { kubeClients, labelledPods, leaseHolder } from "../src/services/component-pods.ts";
import { REPLICA_SUFFIXES, replicaPorts, SERVICE_COMPONENTS } from "../src/services/component-ports.ts";
import { awaitExpectedState } from "../src/services/component-roles.ts";
import { COMPONENT_SERVICES, servicesUsage } from "../src/services/components.ts";
import { SERVICES_FLAG } from "../src/services/index.ts";
import { auditAgentPort, SERVICES_AUDIT, servicesAuditUsage } from "../src/services/services-audit.ts";
import { down, envFilePath, selectServices, status, up } from "../src/stack.ts";
import { pidFileOf } from "../src/state-files.ts";
import { configOfRunningStack } from "./support/dev-stack-config.ts";
import { withKafkaAdmin } from "./support/kafka-admin.ts";

const HA = ["orchestrator", "backend", "compute", "shaper"] as const;
const names = (services: readonly { name: string }[]) => services.map((s) => s.name);
const allPorts = (ctx: StackContext) =>
  SERVICE_COMPONENTS.flatMap((component) =>
    REPLICA_SUFFIXES.flatMap((_, index) => {
      const p = replicaPorts(ctx.config, component, index);
      return [p.grpc, p.health, ...(p.admin === undefined ? [] : [p.admin])];
    }),
  );

describe("--services", () => {
  test("adds two replicas of each component after the servers they use; no flag adds none", () => {
    expect(names(selectServices([])).some((name) => /-(a|b)$/.test(name))).toBe(false);
    const selected = names(selectServices([], { services: true }));
    for (const component of SERVICE_COMPONENTS) {
      expect(selected).toContain(`${component}-a`);
      expect(selected).toContain(`${component}-b`);
    }
    // the endpoints' audit pipeline: each agent after its endpoint, the audit API after the writer
    const at = (name: string) => selected.indexOf(name);
    for (const name of names(SERVICES_AUDIT)) expect(selected).toContain(name);
    expect(at("audit-agent-a")).toBeGreaterThan(at("endpoint-a"));
    expect(at("audit-agent-b")).toBeGreaterThan(at("endpoint-b"));
    expect(at("audit-api")).toBeGreaterThan(at("audit-writer"));
    expect(names(selectServices(["audit-agent-b"]))).toContain("endpoint-b");
    // endpoint needs Keycloak (its realm) and the backends (its readiness); compute the orchestrators
    expect(names(selectServices(["endpoint-a"]))).toEqual([
      "postgres",
      "etcd",
      "kube-apiserver",
      "minio",
      "keycloak",
      "shaper-a",
      "shaper-b",
      "backend-a",
      "backend-b",
      "endpoint-a",
    ]);
  });

  test("each replica's ports follow services.base_port; none is shared", () => {
    const ctx = createContext({ SVC_STACK_SERVICES_BASE_PORT: "40000" }, { progress: silentProgress });
    expect(replicaPorts(ctx.config, "endpoint", 0)).toEqual({ grpc: 40000, health: 40001, admin: 40002 });
    expect(replicaPorts(ctx.config, "endpoint", 1)).toEqual({ grpc: 40003, health: 40004, admin: 40005 });
    expect(replicaPorts(ctx.config, "orchestrator", 0)).toEqual({ grpc: 40010, health: 40011, admin: undefined });
    expect(replicaPorts(ctx.config, "shaper", 1)).toEqual({ grpc: 40043, health: 40044, admin: undefined });
    const ports = allPorts(ctx);
    expect(new Set(ports).size).toBe(ports.length);
    expect(Math.max(...ports)).toBe(40044);
  });

  test("a port above the room the replicas need names services.base_port", () => {
    const highest = createContext({ SVC_STACK_SERVICES_BASE_PORT: "65491" }, { progress: silentProgress });
    expect(Math.max(...allPorts(highest))).toBe(65535);
    const error = thrownBy(
      () => createContext({ SVC_STACK_SERVICES_BASE_PORT: "65500" }, { progress: silentProgress }),
      StackError,
    );
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe("/services/base_port");
  });

  test.each([
    ["SVC_STACK_SERVICES_NAMESPACE", "Not_A_Namespace", "/services/namespace"],
    ["SVC_STACK_SERVICES_SCHEMA", "svc-components", "/services/schema"],
    ["SVC_STACK_SERVICES_KEY_PREFIX", "no-trailing-slash", "/services/key_prefix"],
    ["SVC_STACK_SERVICES_BUCKET", "X", "/services/bucket"],
    ["SVC_STACK_SERVICES_REALM", "", "/services/realm"],
    ["SVC_STACK_SERVICES_SETTLE_TIMEOUT_SECONDS", "0", "/services/settle_timeout_seconds"],
    ["SVC_STACK_AUDIT_TOPIC", "no spaces", "/audit/topic"],
    ["SVC_STACK_AUDIT_INDEX_SCHEMA", "audit-x", "/audit/index_schema"],
    ["SVC_STACK_AUDIT_KEY_PREFIX", "no-trailing-slash", "/audit/key_prefix"],
    ["SVC_STACK_AUDIT_WRITER_BATCH_MAX_AGE_MS", "5", "/audit/writer_batch_max_age_ms"],
    ["SVC_STACK_AUDIT_GRPC_PORT", "70000", "/audit/grpc_port"],
    ["SVC_STACK_AUDIT_AGENT_B_METRICS_PORT", "0", "/audit/agent_b_metrics_port"],
  ])("%s=%p is refused naming %s", (variable, value, field) => {
    const error = thrownBy(() => createContext({ [variable]: value }, { progress: silentProgress }), StackError);
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe(field);
  });
});

test("the audit API's page token key is made once (0600, 43 characters) and kept", async () => {
  const state = await tempDir("stack-audit-key");
  try {
    const ctx = createContext({}, { stateDir: state.path, progress: silentProgress });
    const key = ensureAuditPageTokenKey(ctx);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(auditPageTokenKeyFile(ctx)).mode & 0o777).toBe(0o600);
    expect(ensureAuditPageTokenKey(ctx)).toBe(key);
  } finally {
    await state.remove();
  }
});

test("up's wait for the expected state fails naming each component short of it and what was seen", async () => {
  const ctx = createContext(
    { SVC_STACK_SERVICES_BASE_PORT: String(freePortSpan(SERVICES_PORT_SPAN + 1)) },
    { progress: silentProgress },
  );
  const error = await rejectionOf(awaitExpectedState(ctx, ["orchestrator", "endpoint"], 300), StackError);
  expect(error.code).toBe("STACK_NOT_READY");
  expect(error.subject).toBe("orchestrator,endpoint");
  expect(error.message).toContain(
    "orchestrator: one leader and one follower expected (orchestrator-a: no answer, orchestrator-b: no answer)",
  );
  expect(error.message).toContain("endpoint: not Ready: endpoint-a, endpoint-b");
});

describeWithServers("the HA components as stack servers", () => {
  let realm: SeededRealm;
  let namespace: TestNamespace;
  let ctx: StackContext;
  let overrides: Record<string, string>;
  let state: TempDir;
  let stateDir: string;
  const schema = randomName("t_stack_services").replaceAll("-", "_");
  const auditTopic = randomName("svc-test-stack-services-audit");
  const auditIndexSchema = randomName("t_stack_services_audit").replaceAll("-", "_");
  const kafkaAdmin = <T>(run: (admin: Admin) => Promise<T>) => withKafkaAdmin("stack-services-test", run);

  beforeAll(async () => {
    realm = await seedTestRealm("stack-services", "tenant-local");
    const stack = stackEnv();
    namespace = await createTestNamespace(loadKubeConfig(stack.kubeconfig), "stack-services");
    await kafkaAdmin((admin) =>
      admin.createTopics({ topics: [auditTopic, `${auditTopic}.dlq`], partitions: 1, replicas: 1 }),
    );
    state = await tempDir("stack-services-test");
    stateDir = state.path;
    // The stack's kube-apiserver, as `up` left its kubeconfig in the state directory.
    mkdirSync(join(stateDir, "kube"));
    copyFileSync(stack.kubeconfig, join(stateDir, "kube", "kubeconfig"));
    overrides = {
      ...configOfRunningStack(stack),
      SVC_STACK_STATE_DIR: stateDir,
      SVC_STACK_SERVICES_BASE_PORT: String(freePortSpan(SERVICES_PORT_SPAN + 1)),
      SVC_STACK_SERVICES_NAMESPACE: namespace.name,
      SVC_STACK_SERVICES_SCHEMA: schema,
      SVC_STACK_SERVICES_KEY_PREFIX: bucketPrefix("stack-services"),
      SVC_STACK_SERVICES_REALM: realm.seed.realm,
      // The realm's svc-components secret, as a user whose seed was given IDP_COMPONENTS_CLIENT_SECRET sets it.
      IDP_COMPONENTS_CLIENT_SECRET: realm.componentsClientSecret,
      SVC_STACK_AUDIT_TOPIC: auditTopic,
      SVC_STACK_AUDIT_KEY_PREFIX: bucketPrefix("stack-services-audit"),
      SVC_STACK_AUDIT_GROUP_ID: randomName("svc-test-stack-services-writer"),
      SVC_STACK_AUDIT_INDEX_SCHEMA: auditIndexSchema,
      SVC_STACK_AUDIT_WRITER_BATCH_MAX_AGE_MS: "300",
      SVC_STACK_AUDIT_GRPC_PORT: String(await freePort()),
      SVC_STACK_AUDIT_REST_PORT: String(await freePort()),
      SVC_STACK_AUDIT_AGENT_A_METRICS_PORT: String(await freePort()),
      SVC_STACK_AUDIT_AGENT_B_METRICS_PORT: String(await freePort()),
      SVC_STACK_AUDIT_CONSUMER_METRICS_PORT: String(await freePort()),
    };
    ctx = createContext({ ...process.env, ...overrides }, { stateDir, progress: silentProgress });
  }, 30_000);

  afterAll(async () => {
    await down(ctx).catch(() => {});
    await namespace?.remove().catch(() => {});
    await kafkaAdmin((admin) => admin.deleteTopics({ topics: [auditTopic, `${auditTopic}.dlq`] })).catch(() => {});
    const sql = new SQL(stackEnv().postgresUrl);
    for (const name of [schema, auditIndexSchema])
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => {});
    await sql.close();
    await realm?.remove();
    await state?.remove();
  }, 60_000);

  test("up --services reaches the expected state; status shows one leader and one follower each; the printed call works and the printed audit call lists it; down stops every replica and the audit pipeline", async () => {
    // Only the flag's own servers: the others run already, outside this state directory.
    const own = SERVICES_FLAG;
    const services = selectServices([], { services: true }).filter((s) => own.includes(s));
    expect(names(services).sort()).toEqual(names(own).sort());
    const result = await up(ctx, services);
    expect(result.timings.map((t) => t.name)).toContain("services");

    // The spec's expected state, as the kube-apiserver shows it: one labelled Pod per HA service, the Lease holder
    for (const component of HA) {
      const holder = await leaseHolder(ctx, component);
      expect([`${component}-a`, `${component}-b`]).toContain(holder ?? "");
      expect(await labelledPods(ctx, component)).toEqual([holder ?? ""]);
    }

    const rows = await status(ctx);
    const replicas = rows.filter((row) => names(COMPONENT_SERVICES).includes(row.name));
    expect(replicas.map((row) => row.name).sort()).toEqual(names(COMPONENT_SERVICES).sort());
    for (const row of replicas) expect(row.state).toBe("ready");
    for (const component of HA) {
      const roles = replicas.filter((row) => row.name.startsWith(`${component}-`)).map((row) => row.role ?? "");
      const holder = await leaseHolder(ctx, component);
      expect(roles.filter((role) => role.startsWith("leader (term ")).length).toBe(1);
      expect(roles.filter((role) => role === `follower (leader ${holder})`).length).toBe(1);
    }
    expect(replicas.filter((row) => row.name.startsWith("endpoint-")).map((row) => row.role)).toEqual([
      "active",
      "active",
    ]);
    const cli = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "status"], {
      env: { ...process.env, ...overrides },
    });
    expect(cli.stdout.toString()).toMatch(/^orchestrator-[ab] +ready .+ {2}leader \(term \d+\)$/m);
    for (const name of names(SERVICES_AUDIT)) {
      expect(rows.find((row) => row.name === name)?.state).toBe("ready");
      expect(cli.stdout.toString()).toMatch(new RegExp(`^${name} +ready `, "m"));
    }

    // The call `up` prints, as printed (bash, grpcurl, the token CLI), with the realm's seeded user password
    const grpcurl = await ensureTool("grpcurl");
    const [, , ...command] = servicesUsage(ctx, grpcurl);
    const call = Bun.spawnSync(["bash", "-c", command.join("\n")], {
      cwd: join(import.meta.dir, "..", "..", ".."),
      env: { ...process.env, IDP_URL: stackEnv().idp.url, IDP_LOCAL_USER_PASSWORD: realm.seed.userPassword },
    });
    expect(call.stderr.toString()).not.toContain("ERROR");
    expect(JSON.parse(call.stdout.toString())).toHaveProperty("nodeId");

    // Its record, from endpoint-a's audit file, listed by the audit API with the command `up` prints, as printed
    // (the security user's token, the last hour); and stored by the writer (the index of the test's own schema)
    const action = "/svc.endpoint.v1.EndpointService/ListShards";
    const written = await waitFor(
      "the call's record in endpoint-a's audit file",
      async () => {
        const lines = readFileSync(join(stateDir, "services", "endpoint-a-audit.jsonl"), "utf8")
          .trim()
          .split("\n");
        return lines.map((line) => JSON.parse(line) as { id: string; action: string }).find((r) => r.action === action);
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const [, auditCommand = ""] = servicesAuditUsage(ctx, grpcurl);
    const listed = await waitFor(
      "the record listed by the audit API",
      async () => {
        const list = Bun.spawnSync(["bash", "-c", auditCommand], {
          cwd: join(import.meta.dir, "..", "..", ".."),
          env: { ...process.env, IDP_URL: stackEnv().idp.url, IDP_LOCAL_USER_PASSWORD: realm.seed.userPassword },
        });
        if (list.exitCode !== 0) throw new Error(`the printed audit call failed: ${list.stderr.toString()}`);
        const body = JSON.parse(list.stdout.toString()) as { events?: { id: string; action: string }[] };
        return body.events?.find((event) => event.id === written.id);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(listed.action).toBe(action);
    const sql = new SQL(stackEnv().postgresUrl);
    try {
      await waitFor(
        "the record in the writer's index",
        async () => {
          const rows = await sql
            .unsafe(`SELECT action FROM "${auditIndexSchema}".events WHERE id = $1`, [written.id])
            .catch(() => []);
          return rows.length === 1 && rows[0].action === action ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    } finally {
      await sql.close();
    }

    const pids = names(own).map((name) => livePid(pidFileOf(ctx, name)));
    expect(pids.every((pid) => pid !== undefined)).toBe(true);
    // A server of the stack itself (a stand-in under Kafka's name, in this state directory): `down --services`
    // leaves it and the env file alone; a whole `down` stops it.
    mkdirSync(join(stateDir, "logs"), { recursive: true });
    const base = spawnDaemon({
      name: "kafka",
      command: "sleep",
      args: ["300"],
      env: {},
      logFile: join(stateDir, "logs", "stand-in.log"),
      pidFile: pidFileOf(ctx, "kafka"),
    });
    writeFileSync(envFilePath(stateDir), "SVC_STACK_STAND_IN=1\n");
    const stopped = await down(ctx, { services: true });
    expect(stopped.sort()).toEqual(names(own).sort());
    expect(livePid(pidFileOf(ctx, "kafka"))).toBe(base.pid);
    expect(existsSync(envFilePath(stateDir))).toBe(true);
    expect((await rejectionOf(down(ctx, { services: true, purge: true }), StackError)).code).toBe(
      "STACK_CONFIG_INVALID",
    );
    expect(await down(ctx)).toEqual(["kafka"]);
    expect(existsSync(envFilePath(stateDir))).toBe(false);
    for (const pid of pids) expect(isAlive(pid ?? 0) && !isZombie(pid ?? 0)).toBe(false);
    const { grpc_port, rest_port, consumer_metrics_port } = ctx.config.audit;
    const auditPorts = [grpc_port, rest_port, consumer_metrics_port, auditAgentPort(ctx, 0), auditAgentPort(ctx, 1)];
    const free = await Promise.all([...allPorts(ctx), ...auditPorts].map((port) => isPortFree(port)));
    expect(free.every(Boolean)).toBe(true);
  }, 150_000);

  test("when no leader comes (another holder keeps the Lease), up fails naming the component and stops the replicas it started", async () => {
    const { coordination } = kubeClients(ctx);
    const name = "orchestrator-leader";
    await coordination.deleteNamespacedLease({ name, namespace: namespace.name }).catch(() => {});
    const now = new V1MicroTime(Date.now());
    await coordination.createNamespacedLease({
      namespace: namespace.name,
      body: {
        metadata: { name },
        spec: { holderIdentity: "intruder", leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
      },
    });
    const impatient = createContext(
      { ...process.env, ...overrides, SVC_STACK_SERVICES_SETTLE_TIMEOUT_SECONDS: "3" },
      { stateDir, progress: silentProgress },
    );
    const orchestrators = COMPONENT_SERVICES.filter((s) => s.name.startsWith("orchestrator-"));
    const error = await rejectionOf(up(impatient, orchestrators), StackError);
    expect(error.code).toBe("STACK_NOT_READY");
    expect(error.subject).toBe("orchestrator");
    expect(error.message).toContain(
      "orchestrator: one leader and one follower expected (orchestrator-a: follower, orchestrator-b: follower)",
    );
    for (const service of orchestrators) expect(livePid(pidFileOf(impatient, service.name))).toBeUndefined();
    const ports = [0, 1].flatMap((index) => Object.values(replicaPorts(impatient.config, "orchestrator", index)));
    const free = await Promise.all(ports.filter((p): p is number => p !== undefined).map((p) => isPortFree(p)));
    expect(free.every(Boolean)).toBe(true);
  }, 30_000);
});
