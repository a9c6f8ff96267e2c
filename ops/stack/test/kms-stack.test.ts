/**
 * `up --kms` / `--kms-audit` (issue 11): the KMS and its audit instance (agent and queue-consumer with the KMS's
 * settings) as servers of a stack of the test's own — its state directory, free ports, a realm, key store schema,
 * topic, key prefix, group and index schema of its own — on top of the servers the tests run against (which it
 * neither starts nor stops). A KMS event (its bootstrap at start) ends up in an object of svc-kms-audit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { Admin } from "@platformatic/kafka";
import {
  describeWithServers,
  randomName,
  type SeededRealm,
  seedTestRealm,
  stackEnv,
  stackS3Settings,
  type TempDir,
  tempDir,
  waitFor,
} from "@svc/testkit";
import { SQL } from "bun";
import type { StackContext } from "../src/context.ts";
import { createContext } from "../src/context-factory.ts";
import { freePort } from "../src/free-port.ts";
import { silentProgress } from "../src/progress.ts";
import { down, KMS_AUDIT_SERVICES, readEnvFile, selectServices, status, up } from "../src/stack.ts";
import { configOfRunningStack } from "./support/dev-stack-config.ts";
import { withKafkaAdmin } from "./support/kafka-admin.ts";

const names = (services: readonly { name: string }[]) => services.map((s) => s.name);

test("--kms adds the KMS after postgres and keycloak; --kms-audit implies --kms; no flag adds nothing", () => {
  const defaults = names(selectServices([]));
  expect(defaults).not.toContain("kms");
  expect(defaults.some((name) => name.startsWith("kms"))).toBe(false);
  expect(names(selectServices([], { kms: true }))).toEqual([...defaults, "kms"]);
  expect(names(selectServices([], { kmsAudit: true }))).toEqual([
    ...defaults,
    "kms",
    "kms-audit-agent",
    "kms-audit-consumer",
  ]);
  expect(names(selectServices(["etcd"], { kms: true }))).toEqual(["postgres", "etcd", "keycloak", "kms"]);
  expect(names(selectServices(["kms-audit-agent"]))).toEqual([
    "postgres",
    "kafka",
    "keycloak",
    "kms",
    "kms-audit-agent",
  ]);
});

describeWithServers("the KMS and its audit instance as stack servers", () => {
  let realm: SeededRealm;
  let ctx: StackContext;
  let overrides: Record<string, string>;
  let state: TempDir;
  let stateDir: string;
  const topic = randomName("svc-test-stack-kms-audit");
  const keyPrefix = `test/stack-kms-${randomName("p").slice(2)}/`;
  const schema = randomName("t_stack_kms").replaceAll("-", "_");
  const indexSchema = randomName("t_stack_kms_audit").replaceAll("-", "_");

  const kafkaAdmin = <T>(run: (admin: Admin) => Promise<T>) => withKafkaAdmin("stack-kms-test", run);

  beforeAll(async () => {
    realm = await seedTestRealm("stack-kms");
    await kafkaAdmin((admin) => admin.createTopics({ topics: [topic, `${topic}.dlq`], partitions: 1, replicas: 1 }));
    state = await tempDir("stack-kms-test");
    stateDir = state.path;
    overrides = {
      ...configOfRunningStack(stackEnv()),
      SVC_STACK_STATE_DIR: stateDir,
      SVC_STACK_KMS_PORT: String(await freePort()),
      SVC_STACK_KMS_HTTP_PORT: String(await freePort()),
      SVC_STACK_KMS_AGENT_METRICS_PORT: String(await freePort()),
      SVC_STACK_KMS_CONSUMER_METRICS_PORT: String(await freePort()),
      SVC_STACK_KMS_SCHEMA: schema,
      SVC_STACK_KMS_REALM: realm.seed.realm,
      SVC_STACK_KMS_AUDIT_TOPIC: topic,
      SVC_STACK_KMS_AUDIT_KEY_PREFIX: keyPrefix,
      SVC_STACK_KMS_AUDIT_GROUP_ID: randomName("svc-test-stack-kms-writer"),
      SVC_STACK_KMS_AUDIT_INDEX_SCHEMA: indexSchema,
    };
    ctx = createContext({ ...process.env, ...overrides }, { stateDir, progress: silentProgress });
  }, 30_000);

  afterAll(async () => {
    await down(ctx).catch(() => {});
    await kafkaAdmin((admin) => admin.deleteTopics({ topics: [topic, `${topic}.dlq`] })).catch(() => {});
    const sql = new SQL(stackEnv().postgresUrl);
    for (const name of [schema, indexSchema])
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => {});
    await sql.close();
    await realm?.remove();
    await state?.remove();
  }, 60_000);

  test("up --kms-audit starts them (secret 0600, CA exported, addresses in stack.env); status shows them; a KMS event reaches svc-kms-audit; down stops them", async () => {
    // Only the flag's own servers: the others (postgres, keycloak, kafka, minio) run already, outside this state
    // directory, and `up` waits for nothing it was not given.
    const services = selectServices([], { kmsAudit: true }).filter((s) =>
      (KMS_AUDIT_SERVICES as readonly string[]).includes(s.name),
    );
    const result = await up(ctx, services);
    expect(result.timings.map((t) => t.name).sort()).toEqual([...KMS_AUDIT_SERVICES].sort());

    const passphrase = join(stateDir, "kms", "passphrase");
    expect(statSync(passphrase).mode & 0o777).toBe(0o600);
    const secret = readFileSync(passphrase, "utf8");
    expect(secret.trim().length).toBeGreaterThanOrEqual(40);
    const env = readEnvFile(stateDir) ?? {};
    expect(env.SVC_STACK_KMS_ADDRESS).toBe(`127.0.0.1:${overrides.SVC_STACK_KMS_PORT}`);
    expect(env.SVC_STACK_KMS_CA_CERT).toBe(join(stateDir, "kms", "kms-root-ca.pem"));
    const ca = readFileSync(env.SVC_STACK_KMS_CA_CERT ?? "", "utf8");
    expect(ca).toContain("BEGIN CERTIFICATE");
    // TLS with the exported CA; the KMS is unsealed (ready)
    const ready = await fetch(`https://127.0.0.1:${overrides.SVC_STACK_KMS_HTTP_PORT}/health/ready`, { tls: { ca } });
    expect(ready.status).toBe(200);

    const rows = await status(ctx);
    for (const name of KMS_AUDIT_SERVICES) expect(rows.find((row) => row.name === name)?.state).toBe("ready");
    const cli = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "status"], {
      env: { ...process.env, ...overrides },
    });
    const printed = cli.stdout.toString();
    for (const name of KMS_AUDIT_SERVICES) expect(printed).toMatch(new RegExp(`^${name} +ready `, "m"));

    // A second up adopts what runs and keeps the secret
    const again = await up(ctx, services);
    expect(again.timings.every((t) => t.alreadyRunning)).toBe(true);
    expect(readFileSync(passphrase, "utf8")).toBe(secret);

    // The bootstrap and unseal at start, carried by the started agent and queue-consumer into svc-kms-audit
    const sql = new SQL(stackEnv().postgresUrl);
    let indexed: { action: string; bucket: string; key: string }[];
    try {
      indexed = await waitFor(
        "the KMS's start events in the index",
        async () => {
          const found = (await sql
            .unsafe(
              `SELECT e.action, o.bucket, o.key FROM "${indexSchema}".events e JOIN "${indexSchema}".objects o USING (object_id)`,
            )
            .catch(() => [])) as { action: string; bucket: string; key: string }[];
          const actions = new Set(found.map((row) => row.action));
          return actions.has("kms.bootstrap") && actions.has("kms.unseal") ? found : undefined;
        },
        { timeoutMs: 40_000, intervalMs: 250 },
      );
    } finally {
      await sql.close();
    }
    const bootstrap = indexed.find((row) => row.action === "kms.bootstrap");
    expect(bootstrap?.bucket).toBe("svc-kms-audit");
    expect(bootstrap?.key.startsWith(keyPrefix)).toBe(true);
    const s3 = new S3Client(stackS3Settings());
    try {
      const object = await s3.send(new GetObjectCommand({ Bucket: "svc-kms-audit", Key: bootstrap?.key ?? "" }));
      const text = (await object.Body?.transformToString("utf8")) ?? "";
      expect(text).toContain('"action":"kms.bootstrap"');
      expect(text).toContain('"source":"kms"');
      expect(text).not.toContain(secret.trim());
    } finally {
      s3.destroy();
    }

    const stopped = await down(ctx);
    expect(stopped).toEqual(["kms-audit-consumer", "kms-audit-agent", "kms"]);
    expect((await status(ctx)).some((row) => row.name.startsWith("kms"))).toBe(false);
  }, 60_000);
});
