/**
 * The KMS's role matrix (docs/kms.md "Methods and roles"; @svc/auth's policy rows kms.keys.manage, kms.keys.use,
 * kms.pubkey.read): every method called by a token of each role, over TLS with the exported CA. An allowed call
 * succeeds; a refused one is PERMISSION_DENIED and recorded as a permission-denied event naming the method, the
 * operation and the caller; the admin port's /metrics counts each method's calls by the status sent. Also here: SVC_KMS_TLS=false serves plaintext (a TLS client fails with
 * SDK_TLS_HANDSHAKE_FAILED), a KMS process on a taken admin port exits 1 naming the port, and a KMS process lives
 * through SIGHUP (a rotator's) and records its seal when SIGTERM stops it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { type AuditRecord, parseRecordLine } from "@svc/audit-record";
import { readJsonLines, waitFor } from "@svc/common";
import { metricValue } from "@svc/component-runtime/testing";
import { KeyKind, KmsServiceService } from "@svc/proto";
import { createClient, SdkError, type SvcClient } from "@svc/sdk";
import { randomName, rejectionOf, type SeededRealm, seedTestRealm, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import type { Kms } from "../index.ts";
import { accessToken, grantRole, kmsEnv, startTestKms } from "./support/kms-fixture.ts";

const PASSPHRASE = `kms-roles-passphrase-${randomName("p")}`;

type Role = "app" | "keymanager" | "pubkey-reader" | "none";
type Call = (client: SvcClient) => Promise<unknown>;

let realm: SeededRealm;
let dir: string;
let env: Record<string, string>;
let schema: string;
let kms: Kms;
const tokens = new Map<Role, string>();
/** The principal each role's token belongs to (the seed's users: svc-app, svc-ops, svc-security). */
const principals = new Map<Role, string>();
const clients: SvcClient[] = [];

function kmsClient(token: string, extra: Record<string, unknown> = {}, port = kms.grpcPort): SvcClient {
  const client = createClient({
    address: "127.0.0.1:1",
    secure: false,
    access_token: token,
    tenant_id: realm.seed.tenantId,
    kms_address: `127.0.0.1:${port}`,
    kms_ca_cert: join(dir, "kms-root-ca.pem"),
    call_timeout_ms: 10_000,
    ...extra,
  });
  clients.push(client);
  return client;
}

const auditRecords = (): AuditRecord[] =>
  readFileSync(join(dir, "kms-audit.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => parseRecordLine(line));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "kms-roles-"));
  schema = randomName("t_kms_roles").replaceAll("-", "_");
  realm = await seedTestRealm("kms-roles");
  // Roles of the seeded users: app has `app`; ops gets `keymanager`; security gets `pubkey-reader` after a token
  // with `security` alone (no KMS role) is taken.
  tokens.set("none", await accessToken(realm, "security"));
  await grantRole(realm, "ops", "keymanager");
  await grantRole(realm, "security", "pubkey-reader");
  const [app, manager, reader] = await Promise.all([
    accessToken(realm, "app"),
    accessToken(realm, "ops"),
    accessToken(realm, "security"),
  ]);
  tokens.set("app", app).set("keymanager", manager).set("pubkey-reader", reader);
  principals.set("app", "svc-app").set("keymanager", "svc-ops").set("pubkey-reader", "svc-security");
  principals.set("none", "svc-security");
  env = kmsEnv({ pgUrl: stackEnv().postgresUrl, schema, issuer: realm.issuer, dir, passphrase: PASSPHRASE });
  kms = await startTestKms(env);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await kms?.stop().catch(() => {});
  const sql = new SQL(stackEnv().postgresUrl);
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.close();
  await realm?.remove();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("role matrix", () => {
  test("each method allows exactly its roles; every refusal is PERMISSION_DENIED and recorded", async () => {
    const manager = kmsClient(tokens.get("keymanager") ?? "");
    await manager.kmsGenerateKey({ name: "aes", kind: KeyKind.KEY_KIND_AES_256_GCM });
    await manager.kmsGenerateKey({ name: "ed", kind: KeyKind.KEY_KIND_ED25519 });
    const { ciphertext } = await manager.kmsEncrypt({ name: "aes", plaintext: Buffer.from("data key") });
    const message = Buffer.from("release 1.0");
    const { signature, version } = await manager.kmsSign({ name: "ed", message });
    const manage: Role[] = ["keymanager"];
    const use: Role[] = ["app", "keymanager"];
    const read: Role[] = ["pubkey-reader", "keymanager"];
    // [method, operation, roles allowed, the call]; generate/rotate/revoke make a key of each caller's own name
    const matrix: [string, string, Role[], (role: Role) => Call][] = [
      ["GenerateKey", "kms.keys.manage", manage, (r) => (c) => c.kmsGenerateKey({ name: `gen-${r}`, kind: 1 })],
      ["ListKeys", "kms.keys.manage", manage, () => (c) => c.kmsListKeys()],
      ["RotateKey", "kms.keys.manage", manage, () => (c) => c.kmsRotateKey({ name: "aes" })],
      ["Unseal", "kms.keys.manage", manage, () => (c) => c.kmsUnseal(PASSPHRASE)],
      ["GetPublicKey", "kms.pubkey.read", read, () => (c) => c.kmsGetPublicKey({ name: "ed" })],
      ["Encrypt", "kms.keys.use", use, () => (c) => c.kmsEncrypt({ name: "aes", plaintext: Buffer.from("x") })],
      ["Decrypt", "kms.keys.use", use, () => (c) => c.kmsDecrypt({ name: "aes", ciphertext })],
      ["Sign", "kms.keys.use", use, () => (c) => c.kmsSign({ name: "ed", message })],
      ["Verify", "kms.keys.use", use, () => (c) => c.kmsVerify({ name: "ed", message, signature, version })],
      ["Seal", "kms.keys.manage", [], () => (c) => c.kmsSeal()], // allowed for keymanager: tested below
      ["RevokeKey", "kms.keys.manage", [], () => (c) => c.kmsRevokeKey({ name: "ed" })], // the same
    ];
    const refused: { role: Role; method: string; operation: string }[] = [];
    for (const [method, operation, allowed, call] of matrix) {
      for (const role of ["app", "keymanager", "pubkey-reader", "none"] as const) {
        const last = method === "Seal" || method === "RevokeKey";
        if (last && role === "keymanager") continue;
        const client = kmsClient(tokens.get(role) ?? "");
        const outcome = await call(role)(client).then(
          () => "allowed",
          (error: unknown) => error,
        );
        if (allowed.includes(role)) {
          expect({ method, role, outcome }).toEqual({ method, role, outcome: "allowed" });
        } else {
          expect({ method, role, outcome }).toMatchObject({
            method,
            role,
            outcome: { code: "SDK_PERMISSION_DENIED", serverCode: "AUTH_PERMISSION_DENIED" },
          });
          expect(outcome).toBeInstanceOf(SdkError);
          expect((outcome as SdkError).grpcCode).toBe(status.PERMISSION_DENIED);
          expect((outcome as SdkError).message).toContain(`${operation} requires role`);
          refused.push({ role, method, operation });
        }
      }
    }
    // The matrix leaves no gap: it names every method of the service.
    const methods = Object.values(KmsServiceService).map((definition) => definition.path.split("/").pop() ?? "");
    expect(matrix.map(([method]) => method).sort()).toEqual(methods.sort());
    // 4 manage methods × 3 roles, GetPublicKey × 2, 4 use methods × 2, Seal and RevokeKey × 3
    expect(refused.length).toBe(4 * 3 + 2 + 4 * 2 + 2 * 3);

    // `none` and `pubkey-reader` are one user (security, before and after the grant): told apart by the counts below
    const denials = auditRecords().filter((record) => record.action === "kms.permission_denied");
    for (const { role, method, operation } of refused) {
      const found = denials.find(
        (record) =>
          record.attributes?.method === `/svc.kms.v1.KmsService/${method}` &&
          record.attributes?.operation === operation &&
          record.principal_id === principals.get(role),
      );
      expect({ role, method, found: found !== undefined }).toEqual({ role, method, found: true });
      expect(found).toMatchObject({ result: "PERMISSION_DENIED", source: "kms", tenant_id: realm.seed.tenantId });
    }
    const perCall = (method: string, principal: string) =>
      denials.filter((r) => r.attributes?.method === `/svc.kms.v1.KmsService/${method}` && r.principal_id === principal)
        .length;
    // security was refused GenerateKey twice (without a KMS role, then as pubkey-reader), ops never
    expect(perCall("GenerateKey", "svc-security")).toBe(2);
    expect(perCall("GenerateKey", "svc-ops")).toBe(0);
    expect(perCall("Encrypt", "svc-app")).toBe(0);
    expect(perCall("GetPublicKey", "svc-app")).toBe(1);
    expect(denials.length).toBe(refused.length);

    // /metrics (public on the admin port) counts every call by the status sent: the matrix's allowed calls (plus the
    // set-up calls above) as OK, its refusals as PERMISSION_DENIED
    const ca = readFileSync(join(dir, "kms-root-ca.pem"), "utf8");
    const scrape = await fetch(`https://localhost:${kms.httpPort}/metrics`, { tls: { ca } });
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    const setUp: Record<string, number> = { GenerateKey: 2, Encrypt: 1, Sign: 1 };
    const counted = (method: string, code: string) =>
      metricValue(text, "svc_grpc_server_calls_total", { method: `/svc.kms.v1.KmsService/${method}`, code }) ?? 0;
    for (const [method, , allowed] of matrix) {
      expect({ method, ok: counted(method, "OK"), denied: counted(method, "PERMISSION_DENIED") }).toEqual({
        method,
        ok: allowed.length + (setUp[method] ?? 0),
        denied: refused.filter((refusal) => refusal.method === method).length,
      });
    }

    // Seal and RevokeKey for keymanager last: they change what the other calls would see.
    expect((await manager.kmsRevokeKey({ name: "ed" })).key?.name).toBe("ed");
    expect((await manager.kmsSeal()).sealed).toBe(true);
    expect((await manager.kmsUnseal(PASSPHRASE)).sealed).toBe(false);
  }, 30_000);
});

describe("plaintext only when configured", () => {
  test("SVC_KMS_TLS=false serves plaintext; a TLS client fails with SDK_TLS_HANDSHAKE_FAILED", async () => {
    const plain = await startTestKms({ ...env, SVC_KMS_TLS: "false", SVC_AUDIT_LOG_FILE: join(dir, "plain.jsonl") });
    try {
      const app = tokens.get("app") ?? "";
      const client = kmsClient(app, { kms_secure: false, kms_ca_cert: undefined }, plain.grpcPort);
      const { ciphertext } = await client.kmsEncrypt({ name: "aes", plaintext: Buffer.from("over plaintext") });
      expect((await client.kmsDecrypt({ name: "aes", ciphertext })).plaintext.toString()).toBe("over plaintext");
      const health = await fetch(`http://127.0.0.1:${plain.httpPort}/health`);
      expect(health.status).toBe(200);

      const tls = await rejectionOf(kmsClient(app, {}, plain.grpcPort).kmsListKeys(), SdkError);
      expect(tls).toMatchObject({ code: "SDK_TLS_HANDSHAKE_FAILED", subject: "kms_secure" });
      expect(tls.message).toContain("does not speak TLS");
    } finally {
      await plain.stop();
    }
  });
});

describe("the KMS process", () => {
  test("an admin port in use fails the start: exit 1, the port named (no SO_REUSEPORT sharing)", async () => {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {
      env: { ...env, SVC_KMS_HTTP_PORT: String(kms.httpPort), SVC_AUDIT_LOG_FILE: join(dir, "second.jsonl") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    expect(code).toBe(1);
    expect(stderr).toContain("KMS_LISTEN_FAILED");
    expect(stderr).toContain(`:${kms.httpPort}`);
    expect(stderr).toContain("SVC_KMS_HTTP_PORT");
    // the first KMS still answers alone on its port
    const ca = readFileSync(join(dir, "kms-root-ca.pem"), "utf8");
    expect((await fetch(`https://localhost:${kms.httpPort}/health`, { tls: { ca } })).status).toBe(200);
  }, 30_000);

  test("SIGHUP (a rotator's postrotate kill -HUP) is logged and ignored; SIGTERM then stops it with exit 0 and its seal recorded", async () => {
    const audit = join(dir, `${randomName("hup")}.jsonl`);
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {
      env: { ...env, SVC_AUDIT_LOG_FILE: audit },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const lines: Record<string, unknown>[] = [];
      const other: string[] = [];
      void readJsonLines<Record<string, unknown>>(
        child.stderr,
        (line) => lines.push(line),
        (text) => other.push(text),
        (error) => other.push(String(error)),
      );
      const exited = () =>
        child.exitCode !== null || child.signalCode !== null
          ? new Error(`kms exited (${child.exitCode ?? child.signalCode}): ${other.join("\n")}`)
          : undefined;
      const line = (what: string, match: (line: Record<string, unknown>) => boolean) =>
        waitFor(what, async () => lines.find(match), { timeoutMs: 20_000, intervalMs: 20, abort: exited });
      const started = await line("kms started", (l) => l.msg === "kms started");
      child.kill("SIGHUP");
      await line("SIGHUP logged", (l) => l.signal === "SIGHUP");
      const ca = readFileSync(join(dir, "kms-root-ca.pem"), "utf8");
      expect((await fetch(`https://localhost:${started.httpPort}/health`, { tls: { ca } })).status).toBe(200);
      expect(exited()).toBeUndefined();
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      const records = readFileSync(audit, "utf8")
        .trimEnd()
        .split("\n")
        .map((text) => parseRecordLine(text));
      expect(records.map((r) => [r.action, r.attributes?.trigger])).toEqual([
        ["kms.unseal", "start"],
        ["kms.seal", "shutdown"],
      ]);
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
  }, 30_000);
});
