/**
 * The KMS against the real stack (issue 11): PostgreSQL key store, Keycloak tokens (a seeded realm of its own, where
 * `app` gets keymanager and `security` gets pubkey-reader), every operation through @svc/sdk over TLS with the
 * exported CA; seal/unseal, a wrong passphrase, restart, rotation, revocation; every audited kind carried by the real
 * agent and queue-consumer into an object of `svc-kms-audit`, without key material, and not into `svc-audit`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey, verify as verifySignature } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { status } from "@grpc/grpc-js";
import { parseRecordLine } from "@svc/audit-record";
import { HealthCheckResponse_ServingStatus, KeyKind, KeyState } from "@svc/proto";
import { createClient, SdkError, type SvcClient } from "@svc/sdk";
import {
  randomName,
  rejectionOf,
  type SeededRealm,
  seedTestRealm,
  stackEnv,
  stackS3Settings,
  waitFor,
} from "@svc/testkit";
import { SQL } from "bun";
import { pino } from "pino";
import { bootstrapStore, createRootCa, KeyStore, type Kms, KmsError, parseKmsConfig, startKms } from "../index.ts";
import { type KmsAuditInstance, startKmsAuditInstance } from "./support/audit-instance.ts";
import { accessToken, grantRole, kmsEnv, startTestKms } from "./support/kms-fixture.ts";

const PASSPHRASE = `kms-test-passphrase-${randomName("p")}`;
const PLAINTEXT = "four-kilobyte-secret-data-key-material-".repeat(100);

let realm: SeededRealm;
let dir: string;
let env: Record<string, string>;
let kms: Kms;
let sql: SQL;
let schema: string;
let keymanager: string;
let pubkeyReader: string;
let ops: string;
const clients: SvcClient[] = [];
// The KMS audit instance: the real agent and queue-consumer with the KMS's settings (bucket svc-kms-audit), on a topic,
// key prefix, index schema and group of this file's own.
let instance: KmsAuditInstance;
let s3: S3Client;

function kmsClient(token: string, extra: Record<string, unknown> = {}): SvcClient {
  const client = createClient({
    address: "127.0.0.1:1",
    secure: false,
    access_token: token,
    tenant_id: realm.seed.tenantId,
    kms_address: `127.0.0.1:${kms.grpcPort}`,
    kms_ca_cert: join(dir, "kms-root-ca.pem"),
    call_timeout_ms: 10_000,
    ...extra,
  });
  clients.push(client);
  return client;
}

const sdkError = (promise: Promise<unknown>) => rejectionOf(promise, SdkError);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "kms-test-"));
  schema = randomName("t_kms").replaceAll("-", "_");
  realm = await seedTestRealm("kms");
  await grantRole(realm, "app", "keymanager");
  await grantRole(realm, "security", "pubkey-reader");
  [keymanager, pubkeyReader, ops] = await Promise.all([
    accessToken(realm, "app"),
    accessToken(realm, "security"),
    accessToken(realm, "ops"),
  ]);
  sql = new SQL(stackEnv().postgresUrl);
  env = kmsEnv({ pgUrl: stackEnv().postgresUrl, schema, issuer: realm.issuer, dir, passphrase: PASSPHRASE });
  kms = await startTestKms(env);
  instance = await startKmsAuditInstance(join(dir, "kms-audit.jsonl"), dir);
  s3 = new S3Client(stackS3Settings());
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await kms?.stop().catch(() => {});
  await instance?.remove();
  s3?.destroy();
  await sql?.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql?.close();
  await realm?.remove();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("keys over TLS with the exported CA", () => {
  test("AES-256-GCM: encrypt and decrypt 4 KiB; associated data binds; the store holds no plaintext key", async () => {
    const client = kmsClient(keymanager);
    const made = await client.kmsGenerateKey({ name: "data-key", kind: KeyKind.KEY_KIND_AES_256_GCM });
    expect(made.key).toMatchObject({ name: "data-key", state: KeyState.KEY_STATE_ENABLED, primaryVersion: 1 });
    const plaintext = Buffer.from(PLAINTEXT);
    const sealed = await client.kmsEncrypt({ name: "data-key", plaintext, associatedData: Buffer.from("row-7") });
    expect(sealed.version).toBe(1);
    expect(sealed.ciphertext.includes(plaintext.subarray(0, 16))).toBe(false);
    const opened = await client.kmsDecrypt({
      name: "data-key",
      ciphertext: sealed.ciphertext,
      associatedData: Buffer.from("row-7"),
    });
    expect(opened.plaintext.equals(plaintext)).toBe(true);
    const wrongAad = await sdkError(client.kmsDecrypt({ name: "data-key", ciphertext: sealed.ciphertext }));
    expect(wrongAad).toMatchObject({ grpcCode: status.INVALID_ARGUMENT, serverCode: "KMS_DECRYPT_FAILED" });

    const exists = await sdkError(client.kmsGenerateKey({ name: "data-key", kind: KeyKind.KEY_KIND_AES_256_GCM }));
    expect(exists).toMatchObject({ grpcCode: status.ALREADY_EXISTS, serverCode: "KMS_KEY_EXISTS" });
    const rows = await sql.unsafe(`SELECT wrapped_material FROM "${schema}".key_versions WHERE name = 'data-key'`);
    expect((rows[0] as { wrapped_material: Uint8Array }).wrapped_material.length).toBe(12 + 32 + 16);
  });

  test("ECDSA P-256 and Ed25519: sign and verify; a pubkey-reader reads the public key and verifies locally", async () => {
    const manager = kmsClient(keymanager);
    const reader = kmsClient(pubkeyReader);
    for (const [name, kind, algorithm] of [
      ["signer-ec", KeyKind.KEY_KIND_ECDSA_P256, "sha256"],
      ["signer-ed", KeyKind.KEY_KIND_ED25519, null],
    ] as const) {
      await manager.kmsGenerateKey({ name, kind });
      const message = Buffer.from(`release ${name}`);
      const { signature, version } = await manager.kmsSign({ name, message });
      const { publicKeyPem, kind: readKind } = await reader.kmsGetPublicKey({ name });
      expect(readKind).toBe(kind);
      expect(verifySignature(algorithm, message, createPublicKey(publicKeyPem), signature)).toBe(true);
      expect((await manager.kmsVerify({ name, message, signature, version })).valid).toBe(true);
      expect((await manager.kmsVerify({ name, message: Buffer.from("other"), signature, version })).valid).toBe(false);
      // Verify is key use (kms.keys.use): a pubkey-reader verifies with the public key, not through the KMS
      expect((await sdkError(reader.kmsVerify({ name, message, signature, version }))).code).toBe(
        "SDK_PERMISSION_DENIED",
      );
    }
    const wrongKind = await sdkError(manager.kmsSign({ name: "data-key", message: Buffer.from("x") }));
    expect(wrongKind.serverCode).toBe("KMS_WRONG_KEY_KIND");
  });

  test("rotation: data under version 1 still decrypts; new ciphertext names version 2", async () => {
    const client = kmsClient(keymanager);
    await client.kmsGenerateKey({ name: "rotating", kind: KeyKind.KEY_KIND_AES_256_GCM });
    const old = await client.kmsEncrypt({ name: "rotating", plaintext: Buffer.from("v1 data") });
    const rotated = await client.kmsRotateKey({ name: "rotating" });
    expect(rotated.key?.primaryVersion).toBe(2);
    const fresh = await client.kmsEncrypt({ name: "rotating", plaintext: Buffer.from("v2 data") });
    expect(fresh.version).toBe(2);
    expect((await client.kmsDecrypt({ name: "rotating", ciphertext: old.ciphertext })).plaintext.toString()).toBe(
      "v1 data",
    );
    expect((await client.kmsDecrypt({ name: "rotating", ciphertext: fresh.ciphertext })).version).toBe(2);
  });

  test("revocation: a revoked key refuses encrypt, decrypt, rotate and a second revocation", async () => {
    const client = kmsClient(keymanager);
    await client.kmsGenerateKey({ name: "doomed", kind: KeyKind.KEY_KIND_AES_256_GCM });
    const before = await client.kmsEncrypt({ name: "doomed", plaintext: Buffer.from("x") });
    const revoked = await client.kmsRevokeKey({ name: "doomed" });
    expect(revoked.key?.state).toBe(KeyState.KEY_STATE_REVOKED);
    for (const call of [
      () => client.kmsEncrypt({ name: "doomed", plaintext: Buffer.from("y") }),
      () => client.kmsDecrypt({ name: "doomed", ciphertext: before.ciphertext }),
      () => client.kmsRotateKey({ name: "doomed" }),
      () => client.kmsRevokeKey({ name: "doomed" }),
    ]) {
      expect(await sdkError(call())).toMatchObject({
        grpcCode: status.FAILED_PRECONDITION,
        serverCode: "KMS_KEY_REVOKED",
      });
    }
    const missing = await sdkError(client.kmsEncrypt({ name: "never-made", plaintext: Buffer.from("y") }));
    expect(missing).toMatchObject({ grpcCode: status.NOT_FOUND, serverCode: "KMS_KEY_NOT_FOUND" });
  });

  test("roles: a pubkey-reader may not generate or encrypt (PERMISSION_DENIED); keys list for keymanager and /admin/keys for ops", async () => {
    const reader = kmsClient(pubkeyReader);
    const denied = await sdkError(reader.kmsGenerateKey({ name: "not-yours", kind: KeyKind.KEY_KIND_AES_256_GCM }));
    expect(denied).toMatchObject({ code: "SDK_PERMISSION_DENIED", serverCode: "AUTH_PERMISSION_DENIED" });
    expect((await sdkError(reader.kmsEncrypt({ name: "data-key", plaintext: Buffer.from("x") }))).code).toBe(
      "SDK_PERMISSION_DENIED",
    );
    const listed = await kmsClient(keymanager).kmsListKeys();
    expect(listed.keys.map((key) => key.name)).toEqual(expect.arrayContaining(["data-key", "doomed", "rotating"]));

    const ca = readFileSync(join(dir, "kms-root-ca.pem"), "utf8");
    const admin = (token: string) =>
      fetch(`https://localhost:${kms.httpPort}/admin/keys`, {
        headers: { authorization: `Bearer ${token}`, "x-tenant-id": realm.seed.tenantId },
        tls: { ca },
      });
    const answer = await admin(ops);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { keys: { name: string; state: string }[] };
    expect(body.keys.find((key) => key.name === "doomed")?.state).toBe("REVOKED");
    expect(JSON.stringify(body)).not.toMatch(/material|wrapped|PRIVATE/);
    expect((await admin(keymanager)).status).toBe(403);
  });
});

describe("refusals", () => {
  test("bad requests are INVALID_ARGUMENT naming the field", async () => {
    const client = kmsClient(keymanager);
    const cases: [() => Promise<unknown>, string][] = [
      [() => client.kmsGenerateKey({ name: "Bad Name", kind: KeyKind.KEY_KIND_AES_256_GCM }), "name"],
      [() => client.kmsGenerateKey({ name: "no-kind" }), "kind"],
      [() => client.kmsEncrypt({ name: "data-key", plaintext: Buffer.alloc(64 * 1024 + 1) }), "plaintext"],
      [
        () => client.kmsDecrypt({ name: "data-key", ciphertext: Buffer.from("not a ciphertext of ours") }),
        "ciphertext",
      ],
      [
        () => client.kmsVerify({ name: "signer-ec", message: Buffer.from("m"), signature: Buffer.from("s") }),
        "version",
      ],
    ];
    for (const [call, field] of cases) {
      const error = await sdkError(call());
      expect(error).toMatchObject({ grpcCode: status.INVALID_ARGUMENT, serverCode: "KMS_INVALID_ARGUMENT" });
      expect(error.message).toContain(`${field}:`);
    }
  });

  test("start fails: PostgreSQL unreachable (KMS_STORE_UNAVAILABLE), audit log unwritable (KMS_AUDIT_FAILED), gRPC or admin port taken (KMS_LISTEN_FAILED)", async () => {
    const noStore = await rejectionOf(
      startTestKms({ ...env, SVC_KMS_PG_URL: "postgres://svc:svc@127.0.0.1:1/svc" }),
      KmsError,
    );
    expect(noStore).toMatchObject({ code: "KMS_STORE_UNAVAILABLE", canRetry: true });
    // fail-closed: the unseal at start cannot be recorded, so the KMS does not start
    const noLog = await rejectionOf(startTestKms({ ...env, SVC_AUDIT_LOG_FILE: "/dev/full" }), KmsError);
    expect(noLog.code).toBe("KMS_AUDIT_FAILED");
    const portTaken = await rejectionOf(startTestKms({ ...env, SVC_KMS_PORT: String(kms.grpcPort) }), KmsError);
    expect(portTaken.code).toBe("KMS_LISTEN_FAILED");
    // Elysia binds with SO_REUSEPORT unless told not to: a second KMS must not share the admin port of the first
    const httpTaken = await rejectionOf(startTestKms({ ...env, SVC_KMS_HTTP_PORT: String(kms.httpPort) }), KmsError);
    expect(httpTaken).toMatchObject({ code: "KMS_LISTEN_FAILED", subject: "SVC_KMS_HTTP_PORT" });
    expect(httpTaken.message).toContain(`:${kms.httpPort}`);
  });
});

describe("connection security", () => {
  test("a client with another CA, or with the system roots, is refused with SDK_TLS_CERT_REJECTED", async () => {
    const other = await createRootCa();
    const otherPath = join(dir, "other-ca.pem");
    writeFileSync(otherPath, other.certPem);
    expect((await sdkError(kmsClient(keymanager, { kms_ca_cert: otherPath }).kmsListKeys())).code).toBe(
      "SDK_TLS_CERT_REJECTED",
    );
    expect((await sdkError(kmsClient(keymanager, { kms_ca_cert: undefined }).kmsListKeys())).code).toBe(
      "SDK_TLS_CERT_REJECTED",
    );
  });

  test("a plaintext client gets no answer from the TLS KMS", async () => {
    const error = await sdkError(kmsClient(keymanager, { kms_secure: false }).kmsListKeys());
    expect(error.code).toBe("SDK_UNAVAILABLE");
  });
});

describe("seal", () => {
  test("sealed: key use refused with KMS_SEALED and health NOT_SERVING; a wrong passphrase is refused; unseal restores", async () => {
    const client = kmsClient(keymanager);
    const before = await client.kmsEncrypt({ name: "data-key", plaintext: Buffer.from("kept") });
    await client.kmsGenerateKey({ name: "revoked-while-sealed", kind: KeyKind.KEY_KIND_ED25519 });
    expect((await client.kmsSeal()).sealed).toBe(true);
    // revocation needs no key material: an emergency revocation works while sealed
    expect((await client.kmsRevokeKey({ name: "revoked-while-sealed" })).key?.state).toBe(KeyState.KEY_STATE_REVOKED);
    expect(kms.vault.sealed).toBe(true);
    const refused = await sdkError(client.kmsDecrypt({ name: "data-key", ciphertext: before.ciphertext }));
    expect(refused).toMatchObject({ grpcCode: status.FAILED_PRECONDITION, serverCode: "KMS_SEALED" });
    expect((await sdkError(client.kmsGenerateKey({ name: "while-sealed", kind: 1 }))).serverCode).toBe("KMS_SEALED");
    expect((await client.kmsHealth()).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);

    const wrong = await sdkError(client.kmsUnseal("not-the-passphrase"));
    expect(wrong).toMatchObject({ grpcCode: status.INVALID_ARGUMENT, serverCode: "KMS_PASSPHRASE_WRONG" });
    expect(kms.vault.sealed).toBe(true);

    expect((await client.kmsUnseal(PASSPHRASE)).sealed).toBe(false);
    expect((await client.kmsDecrypt({ name: "data-key", ciphertext: before.ciphertext })).plaintext.toString()).toBe(
      "kept",
    );
    expect((await client.kmsHealth()).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  test("restart: a wrong secret stops the start; the right one unseals and old keys still decrypt", async () => {
    const client = kmsClient(keymanager);
    const before = await client.kmsEncrypt({ name: "rotating", plaintext: Buffer.from("across restarts") });
    await kms.stop();
    const refused = await rejectionOf(startTestKms({ ...env, SVC_KMS_PASSPHRASE: "wrong-passphrase-xyz" }), KmsError);
    expect(refused.code).toBe("KMS_PASSPHRASE_WRONG");
    kms = await startTestKms(env);
    const after = kmsClient(keymanager);
    expect((await after.kmsDecrypt({ name: "rotating", ciphertext: before.ciphertext })).plaintext.toString()).toBe(
      "across restarts",
    );
  }, 30_000);

  test("bootstrap runs once: a second is refused; an empty store without SVC_KMS_BOOTSTRAP refuses to start", async () => {
    const store = new KeyStore(sql, schema);
    expect((await rejectionOf(bootstrapStore(store, PASSPHRASE), KmsError)).code).toBe("KMS_ALREADY_BOOTSTRAPPED");
    const emptySchema = randomName("t_kms_empty").replaceAll("-", "_");
    try {
      const error = await rejectionOf(
        startTestKms({ ...env, SVC_KMS_PG_SCHEMA: emptySchema, SVC_KMS_BOOTSTRAP: "never" }),
        KmsError,
      );
      expect(error.code).toBe("KMS_NOT_BOOTSTRAPPED");
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${emptySchema}" CASCADE`);
    }
  });
});

describe("seal at stop", () => {
  const recordsOf = (path: string) =>
    readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => parseRecordLine(line));

  test("a KMS sealed before its stop records no second seal", async () => {
    const file = join(dir, `${randomName("sealed")}.jsonl`);
    const sealed = await startTestKms({ ...env, SVC_AUDIT_LOG_FILE: file });
    sealed.vault.seal();
    await sealed.stop();
    expect(recordsOf(file).map((r) => [r.action, r.attributes?.trigger])).toEqual([["kms.unseal", "start"]]);
  });

  test("a shutdown seal that cannot be recorded is logged; the key is dropped and the stop completes", async () => {
    const own = join(dir, randomName("gone"));
    mkdirSync(own);
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const failing = await startKms(parseKmsConfig({ ...env, SVC_AUDIT_LOG_FILE: join(own, "audit.jsonl") }), {
      logger,
    });
    rmSync(own, { recursive: true }); // fail-closed: the seal record cannot be written
    await failing.stop();
    expect(failing.vault.sealed).toBe(true);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "kms: shutdown seal not recorded", code: "KMS_AUDIT_FAILED" }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: "kms stopped" }));
  });
});

describe("audit", () => {
  test("the KMS's own log holds every audited kind with identities, and no key material or secret", () => {
    const records = readFileSync(join(dir, "kms-audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => parseRecordLine(line));
    const actions = new Set(records.map((record) => record.action));
    for (const action of [
      "kms.bootstrap",
      "kms.unseal",
      "kms.key.generate",
      "kms.key.rotate",
      "kms.key.revoke",
      "kms.seal",
      "kms.permission_denied",
    ]) {
      expect(actions).toContain(action);
    }
    expect(records.every((record) => record.source === "kms")).toBe(true);
    const denied = records.find((r) => r.action === "kms.permission_denied" && r.resource.endsWith("/not-yours"));
    expect(denied).toMatchObject({
      result: "PERMISSION_DENIED",
      principal_id: "svc-security",
      resource: `keys/${realm.seed.tenantId}/not-yours`,
    });
    // the Seal call, then the seal of the restart test's stop, which dropped the key material too
    const seals = records.filter((r) => r.action === "kms.seal");
    expect(seals.map((r) => r.attributes?.trigger)).toEqual(["call", "shutdown"]);
    expect(seals[0]).toMatchObject({ result: "ok", principal_id: "svc-app", tenant_id: realm.seed.tenantId });
    expect(seals[1]).toMatchObject({ resource: "kms", result: "ok", principal_id: "", tenant_id: "" });
    const wrongUnseal = records.filter((r) => r.action === "kms.unseal" && r.result === "INVALID_ARGUMENT");
    expect(wrongUnseal.map((r) => r.attributes?.trigger).sort()).toEqual(["call", "start"]);
    const generated = records.find((r) => r.action === "kms.key.generate" && r.resource.endsWith("/data-key"));
    expect(generated).toMatchObject({ result: "ok", principal_id: "svc-app", tenant_id: realm.seed.tenantId });
    const text = JSON.stringify(records);
    for (const secret of [
      PASSPHRASE,
      "not-the-passphrase",
      "wrong-passphrase-xyz",
      PLAINTEXT.slice(0, 20),
      keymanager,
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  test("the audit instance carries every kind into objects of svc-kms-audit (none into svc-audit)", async () => {
    const expected = [
      "kms.bootstrap",
      "kms.unseal",
      "kms.key.generate",
      "kms.key.rotate",
      "kms.key.revoke",
      "kms.seal",
      "kms.permission_denied",
    ];
    const indexed = await waitFor(
      "every KMS kind in the index",
      async () => {
        const rows = (await sql
          .unsafe(
            `SELECT DISTINCT e.action, o.bucket, o.key FROM "${instance.indexSchema}".events e JOIN "${instance.indexSchema}".objects o USING (object_id)`,
          )
          .catch(() => [])) as { action: string; bucket: string; key: string }[];
        const actions = new Set(rows.map((row) => row.action));
        return expected.every((action) => actions.has(action)) ? rows : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    expect(new Set(indexed.map((row) => row.bucket))).toEqual(new Set(["svc-kms-audit"]));
    const denied = indexed.find((row) => row.action === "kms.permission_denied");
    const object = await s3.send(new GetObjectCommand({ Bucket: "svc-kms-audit", Key: denied?.key ?? "" }));
    const text = (await object.Body?.transformToString("utf8")) ?? "";
    const records = text
      .trimEnd()
      .split("\n")
      .map((line) => parseRecordLine(line));
    expect(records.find((record) => record.action === "kms.permission_denied")).toMatchObject({
      source: "kms",
      result: "PERMISSION_DENIED",
      principal_id: "svc-security",
      claimed_tenant_id: realm.seed.tenantId,
    });
    for (const secret of [PASSPHRASE, "not-the-passphrase", PLAINTEXT.slice(0, 20), keymanager, pubkeyReader]) {
      expect(text).not.toContain(secret);
    }
    const inServiceBucket = await s3.send(
      new ListObjectsV2Command({ Bucket: "svc-audit", Prefix: instance.keyPrefix }),
    );
    expect(inServiceBucket.KeyCount ?? 0).toBe(0);
  }, 60_000);
});
