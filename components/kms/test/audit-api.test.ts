/**
 * The audit API reads the KMS audit instance's records (issue 11: "the audit API can query them — a setting of the
 * same program, not a copy"): a KMS key event, carried by the real agent and queue-consumer into svc-kms-audit and
 * the instance's index schema, is found by `list_events` of the audit API's own program (audit-api/src/main.ts)
 * started with SVC_AUDIT_INDEX_SCHEMA set to that schema (`kms_audit` on the stack).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { KeyKind } from "@svc/proto";
import { createClient, type SvcClient } from "@svc/sdk";
import { randomName, type SeededRealm, seedTestRealm, stackEnv, type TempDir, tempDir, waitFor } from "@svc/testkit";
import { SQL } from "bun";
import type { Kms } from "../index.ts";
import { type KmsAuditInstance, startKmsAuditInstance } from "./support/audit-instance.ts";
import { accessToken, grantRole, kmsEnv, startTestKms } from "./support/kms-fixture.ts";

const AUDIT_API_MAIN = join(import.meta.dir, "..", "..", "..", "audit-api", "src", "main.ts");

let realm: SeededRealm;
let tmp: TempDir | undefined;
let dir: string;
let schema: string;
let kms: Kms;
let instance: KmsAuditInstance;
let auditApi: Bun.Subprocess<"ignore", "pipe", "pipe"> | undefined;
let auditApiAddress: string;
const clients: SvcClient[] = [];

/** Spawns the audit API on ports 0 and reads its gRPC port from its `started` log line (JSON on stdout). */
async function spawnAuditApi(env: Record<string, string>): Promise<string> {
  const child = Bun.spawn([process.execPath, AUDIT_API_MAIN], { env, stdout: "pipe", stderr: "pipe" });
  auditApi = child;
  const reader = child.stdout.getReader();
  let text = "";
  const port = await waitFor(
    "the audit API's started line",
    async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`audit API exited (${await child.exited}): ${await new Response(child.stderr).text()}`);
      text += new TextDecoder().decode(value);
      return /"grpcPort":(\d+)/.exec(text)?.[1];
    },
    { timeoutMs: 20_000, intervalMs: 1 },
  );
  reader.releaseLock();
  return `127.0.0.1:${port}`;
}

beforeAll(async () => {
  tmp = await tempDir("kms-audit-api");
  dir = tmp.path;
  schema = randomName("t_kms_aa").replaceAll("-", "_");
  realm = await seedTestRealm("kms-audit-api");
  await grantRole(realm, "ops", "keymanager");
  kms = await startTestKms(
    kmsEnv({
      pgUrl: stackEnv().postgresUrl,
      schema,
      issuer: realm.issuer,
      dir,
      passphrase: `kms-audit-api-${randomName("p")}`,
    }),
  );
  instance = await startKmsAuditInstance(join(dir, "kms-audit.jsonl"), dir);
  const stack = stackEnv();
  auditApiAddress = await spawnAuditApi({
    PATH: process.env.PATH ?? "",
    HOME: dir,
    SVC_AUDIT_HOST_PORT: "0",
    SVC_AUDIT_GRPC_HOST: "127.0.0.1",
    SVC_AUDIT_REST_PORT: "0",
    SVC_AUDIT_REST_HOST: "127.0.0.1",
    SVC_AUDIT_PG_URL: stack.postgresUrl,
    // the KMS instance's index: what `kms_audit` is on the stack
    SVC_AUDIT_INDEX_SCHEMA: instance.indexSchema,
    SVC_AUDIT_S3_ENDPOINT: stack.s3.endpoint,
    SVC_AUDIT_S3_REGION: stack.s3.region,
    SVC_AUDIT_S3_ACCESS_KEY: stack.s3.accessKeyId,
    SVC_AUDIT_S3_SECRET_KEY: stack.s3.secretAccessKey,
    SVC_AUDIT_API_PAGE_TOKEN_KEY: `kms-audit-api-test-key-${randomName("k")}`,
    SVC_AUTH_ISSUER: realm.issuer,
    SVC_AUDIT_LOG_LEVEL: "info",
  });
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  auditApi?.kill("SIGTERM");
  await auditApi?.exited;
  await kms?.stop().catch(() => {});
  await instance?.remove();
  const sql = new SQL(stackEnv().postgresUrl);
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.close();
  await realm?.remove();
  await tmp?.remove();
}, 60_000);

test("list_events of the audit API on the KMS instance's index finds a KMS key event", async () => {
  const started = new Date(Date.now() - 60_000).toISOString();
  const manager = createClient({
    address: "127.0.0.1:1",
    secure: false,
    access_token: await accessToken(realm, "ops"),
    tenant_id: realm.seed.tenantId,
    kms_address: `127.0.0.1:${kms.grpcPort}`,
    kms_ca_cert: join(dir, "kms-root-ca.pem"),
  });
  clients.push(manager);
  await manager.kmsGenerateKey({ name: "audited-key", kind: KeyKind.KEY_KIND_AES_256_GCM });

  const reader = createClient({
    address: auditApiAddress,
    secure: false,
    access_token: await accessToken(realm, "security", "audit:read"),
    tenant_id: realm.seed.tenantId,
  });
  clients.push(reader);
  const range = { startTime: started, endTime: new Date(Date.now() + 60_000).toISOString(), pageSize: 100 };
  const events = await waitFor(
    "the key event through list_events",
    async () => {
      const page = await reader.auditListEvents(range);
      return page.events.some((event) => event.action === "kms.key.generate") ? page.events : undefined;
    },
    { timeoutMs: 40_000, intervalMs: 300 },
  );
  const generated = events.find((event) => event.action === "kms.key.generate");
  expect(generated).toMatchObject({
    resource: `keys/${realm.seed.tenantId}/audited-key`,
    result: "ok",
    tenantId: realm.seed.tenantId,
    principalId: "svc-ops",
  });
  expect(events.every((event) => event.tenantId === realm.seed.tenantId)).toBe(true);
}, 60_000);
