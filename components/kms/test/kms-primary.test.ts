/**
 * The KMS with SVC_KMS_WORKERS=2 (docs/kms.md "Workers") as its own process against the real stack: one port served
 * by two worker processes, and every state change seen by both before the call that made it answers. The clients
 * are opened until each worker holds at least one of their connections (read from /proc), so a change that reached
 * one worker only fails these tests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { parseRecordLine } from "@svc/audit-record";
import { HealthCheckResponse_ServingStatus, KeyKind } from "@svc/proto";
import { createClient, SdkError, type SvcClient } from "@svc/sdk";
import { randomName, rejectionOf, type SeededRealm, seedTestRealm, stackEnv, waitFor } from "@svc/testkit";
import { SQL } from "bun";
import { accessToken, grantRole, kmsEnv } from "./support/kms-fixture.ts";
import { connectionsOn, type KmsProcess, spawnKms } from "./support/kms-process.ts";

const PASSPHRASE = `kms-workers-passphrase-${randomName("p")}`;

let realm: SeededRealm;
let dir: string;
let env: Record<string, string>;
let sql: SQL;
let schema: string;
let keymanager: string;
let kms: KmsProcess;
/** Clients (one HTTP/2 connection each) that between them reach every worker. */
let spread: SvcClient[] = [];
const opened: SvcClient[] = [];

function kmsClient(port: number): SvcClient {
  const client = createClient({
    address: "127.0.0.1:1",
    secure: false,
    access_token: keymanager,
    tenant_id: realm.seed.tenantId,
    kms_address: `127.0.0.1:${port}`,
    kms_ca_cert: join(dir, "kms-root-ca.pem"),
    call_timeout_ms: 10_000,
  });
  opened.push(client);
  return client;
}

/** Opens clients (each makes a call, so it connects) until every worker holds at least one of them. */
async function clientsOnEveryWorker(process: KmsProcess): Promise<SvcClient[]> {
  const clients: SvcClient[] = [];
  for (let attempt = 0; attempt < 64; attempt += 1) {
    const client = kmsClient(process.grpcPort);
    await client.kmsListKeys();
    clients.push(client);
    const counts = await connectionsOn(process.grpcPort, process.workerPids);
    if ([...counts.values()].every((count) => count > 0)) return clients;
  }
  throw new Error("64 connections and still a worker without one");
}

const sdkError = (promise: Promise<unknown>) => rejectionOf(promise, SdkError);

const records = () =>
  readFileSync(join(dir, "kms-audit.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => parseRecordLine(line));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "kms-workers-"));
  schema = randomName("t_kmsw").replaceAll("-", "_");
  realm = await seedTestRealm("kmsw");
  await grantRole(realm, "app", "keymanager");
  keymanager = await accessToken(realm, "app");
  sql = new SQL(stackEnv().postgresUrl);
  env = {
    ...process.env,
    ...kmsEnv({ pgUrl: stackEnv().postgresUrl, schema, issuer: realm.issuer, dir, passphrase: PASSPHRASE }),
    SVC_KMS_WORKERS: "2",
  } as Record<string, string>;
  kms = await spawnKms(env);
  spread = await clientsOnEveryWorker(kms);
}, 60_000);

afterAll(async () => {
  for (const client of opened) client.close();
  await kms?.stop().catch(() => {});
  await sql?.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql?.close();
  await realm?.remove();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("two workers on one port", () => {
  test("two worker processes serve the port; bootstrap and the start's unseal are recorded once", () => {
    expect(kms.workerPids.length).toBe(2);
    expect(new Set([kms.child.pid, ...kms.workerPids]).size).toBe(3);
    const start = records().filter((record) => record.action === "kms.unseal");
    expect(start.length).toBe(1);
    expect(start[0]?.attributes).toMatchObject({ trigger: "start" });
    expect(records().filter((record) => record.action === "kms.bootstrap").length).toBe(1);
  });

  test("a second KMS on the same gRPC port is refused (the workers' socket is bound once, exclusively)", async () => {
    for (const workers of ["1", "2"]) {
      // with workers, a worker's failed bind fails the primary's start (and stops the other worker)
      const second = await rejectionOf(
        spawnKms({
          ...env,
          SVC_KMS_PORT: String(kms.grpcPort),
          SVC_KMS_WORKERS: workers,
          SVC_AUDIT_LOG_FILE: join(dir, `second-${workers}.jsonl`),
        }),
        Error,
      );
      expect(second.message).toContain("exited 1");
      expect(second.message).toContain("KMS_LISTEN_FAILED");
    }
    // the first KMS still serves on its port, through every worker
    for (const client of spread) expect((await client.kmsListKeys()).keys).toBeDefined();
  }, 60_000);

  test("seal through one worker seals every worker before it answers; unseal through another unseals all", async () => {
    const key = "sealed-key";
    const [first, ...rest] = spread as [SvcClient, ...SvcClient[]];
    await first.kmsGenerateKey({ name: key, kind: KeyKind.KEY_KIND_AES_256_GCM });
    const sealedText = await first.kmsEncrypt({ name: key, plaintext: Buffer.from("kept") });
    for (const client of spread) await client.kmsEncrypt({ name: key, plaintext: Buffer.from("warm") });

    expect((await first.kmsSeal()).sealed).toBe(true);
    for (const client of spread) {
      const refused = await sdkError(client.kmsDecrypt({ name: key, ciphertext: sealedText.ciphertext }));
      expect(refused).toMatchObject({ grpcCode: status.FAILED_PRECONDITION, serverCode: "KMS_SEALED" });
      expect((await client.kmsHealth()).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    }
    const ca = readFileSync(join(dir, "kms-root-ca.pem"), "utf8");
    expect((await fetch(`https://localhost:${kms.httpPort}/health/ready`, { tls: { ca } })).status).toBe(503);

    const last = rest.at(-1) ?? first;
    const wrong = await sdkError(last.kmsUnseal("not-the-passphrase"));
    expect(wrong).toMatchObject({ grpcCode: status.INVALID_ARGUMENT, serverCode: "KMS_PASSPHRASE_WRONG" });
    for (const client of spread) {
      expect((await sdkError(client.kmsEncrypt({ name: key, plaintext: Buffer.from("x") }))).serverCode).toBe(
        "KMS_SEALED",
      );
    }

    expect((await last.kmsUnseal(PASSPHRASE)).sealed).toBe(false);
    for (const client of spread) {
      const opened = await client.kmsDecrypt({ name: key, ciphertext: sealedText.ciphertext });
      expect(opened.plaintext.toString()).toBe("kept");
    }
    expect((await fetch(`https://localhost:${kms.httpPort}/health/ready`, { tls: { ca } })).status).toBe(200);

    // each event once, from the worker that took the call
    const actions = records().map((record) => `${record.action} ${record.result}`);
    expect(actions.filter((action) => action === "kms.seal ok").length).toBe(1);
    expect(actions.filter((action) => action === "kms.unseal INVALID_ARGUMENT").length).toBe(1);
    expect(
      records().filter((record) => record.action === "kms.unseal" && record.attributes?.trigger === "call").length,
    ).toBe(2);
  }, 30_000);

  test("a revocation through one worker is refused by every worker once it answered", async () => {
    const key = "revoked-key";
    const [first] = spread as [SvcClient];
    await first.kmsGenerateKey({ name: key, kind: KeyKind.KEY_KIND_AES_256_GCM });
    // every worker caches the key's material and state
    for (const client of spread) await client.kmsEncrypt({ name: key, plaintext: Buffer.from("cached") });
    await first.kmsRevokeKey({ name: key });
    for (const client of spread) {
      const refused = await sdkError(client.kmsEncrypt({ name: key, plaintext: Buffer.from("after") }));
      expect(refused).toMatchObject({ grpcCode: status.FAILED_PRECONDITION, serverCode: "KMS_KEY_REVOKED" });
    }
    expect(records().filter((record) => record.action === "kms.key.revoke").length).toBe(1);
  });

  test("a rotation through one worker: every worker encrypts under the new version and decrypts both", async () => {
    const key = "rotated-key";
    const [first, ...rest] = spread as [SvcClient, ...SvcClient[]];
    await first.kmsGenerateKey({ name: key, kind: KeyKind.KEY_KIND_AES_256_GCM });
    const old = await first.kmsEncrypt({ name: key, plaintext: Buffer.from("v1") });
    for (const client of spread)
      expect((await client.kmsEncrypt({ name: key, plaintext: Buffer.from("x") })).version).toBe(1);
    const rotated = await (rest.at(-1) ?? first).kmsRotateKey({ name: key });
    expect(rotated.key?.primaryVersion).toBe(2);
    for (const client of spread) {
      const fresh = await client.kmsEncrypt({ name: key, plaintext: Buffer.from("v2") });
      expect(fresh.version).toBe(2);
      expect((await client.kmsDecrypt({ name: key, ciphertext: old.ciphertext })).plaintext.toString()).toBe("v1");
    }
    // a v2 ciphertext opens on every worker (none serves its cached v1-only copy)
    const newer = await first.kmsEncrypt({ name: key, plaintext: Buffer.from("newer") });
    for (const client of spread) {
      expect((await client.kmsDecrypt({ name: key, ciphertext: newer.ciphertext })).plaintext.toString()).toBe("newer");
    }
  });
});

describe("a worker that dies", () => {
  test("ends the whole KMS: the primary stops the other worker and exits 1 with KMS_WORKER_FAILED", async () => {
    const doomed = await spawnKms({
      ...env,
      SVC_KMS_PORT: "0",
      SVC_KMS_HTTP_PORT: "0",
      SVC_AUDIT_LOG_FILE: join(dir, "doomed.jsonl"),
    });
    const [victim, other] = doomed.workerPids as [number, number];
    process.kill(victim, "SIGKILL");
    expect(await doomed.child.exited).toBe(1);
    expect(doomed.log()).toContain("KMS_WORKER_FAILED");
    await waitFor(
      "the other worker gone",
      async () => ((await Bun.file(`/proc/${other}/stat`).exists()) ? undefined : true),
      { timeoutMs: 10_000 },
    );
  }, 30_000);
});
