import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { parseRecords } from "@svc/audit-record";
import { runCommand } from "@svc/common";
import { rejectionOf, type TempDir, tempDir, thrownBy } from "@svc/testkit";
import { pino } from "pino";
import {
  AuditEmitterError,
  createAuditEmitter,
  EMITTER_DEFAULTS,
  type EmitterConfig,
  KMS_EVENT_ACTIONS,
  KMS_EVENT_KINDS,
  type KmsEventKind,
  REDACTED,
} from "../index.ts";
import { recordsIn } from "./support/records-in.ts";

const silent = pino({ level: "silent" });
let dir: TempDir;

beforeAll(async () => {
  dir = await tempDir("emitter");
});
afterAll(async () => {
  await dir.remove();
});

const fileConfig = (overrides: Partial<EmitterConfig> = {}): EmitterConfig => ({
  source: "kms",
  sink: "file",
  file: join(dir.path, `${crypto.randomUUID()}.jsonl`),
  failMode: "open",
  maxBufferedBytes: 1024 * 1024,
  fsync: false,
  ...overrides,
});

test("each KMS kind is recorded with its stable action; fields default sensibly", async () => {
  const config = fileConfig();
  const emitter = createAuditEmitter(config, { logger: silent });
  for (const kind of KMS_EVENT_KINDS) await emitter.record(kind, { resource: `keys/${kind}`, principal_id: "ops-1" });
  await emitter.record("permission-denied", { result: "PERMISSION_DENIED", resource: "keys/k9", tenant_id: "t1" });
  await emitter.close();
  const records = await recordsIn(config.file ?? "");
  expect(records.map((r) => r.action)).toEqual([
    "kms.key.generate",
    "kms.unseal",
    "kms.seal",
    "kms.key.rotate",
    "kms.key.revoke",
    "kms.permission_denied",
    "kms.bootstrap",
    "kms.permission_denied",
  ]);
  expect(KMS_EVENT_ACTIONS).toEqual({
    "key-generation": "kms.key.generate",
    unseal: "kms.unseal",
    seal: "kms.seal",
    rotation: "kms.key.rotate",
    revocation: "kms.key.revoke",
    "permission-denied": "kms.permission_denied",
    bootstrap: "kms.bootstrap",
  });
  expect(records[0]).toMatchObject({
    source: "kms",
    resource: "keys/key-generation",
    result: "ok",
    duration_ms: 0,
    principal_id: "ops-1",
    claimed_tenant_id: "",
    tenant_id: "",
  });
  expect(records[7]).toMatchObject({ result: "PERMISSION_DENIED", tenant_id: "t1" });
});

test("an unknown kind is refused with AUDIT_EMITTER_RECORD_INVALID", async () => {
  const emitter = createAuditEmitter(fileConfig(), { logger: silent });
  const error = await rejectionOf(emitter.record("format-disk" as KmsEventKind), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_RECORD_INVALID");
  expect(error.subject).toBe("kind");
  await emitter.close();
});

test("event fields are redacted like call fields", async () => {
  const config = fileConfig();
  const emitter = createAuditEmitter(config, { logger: silent });
  const pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----";
  await emitter.record("bootstrap", {
    resource: pem,
    principal_id: "Bearer abcdefghijklmnop",
    attributes: { passphrase: "correct horse", unseal_key: "x", shares: "3" },
  });
  await emitter.close();
  const text = await Bun.file(config.file ?? "").text();
  expect(text).not.toContain("PRIVATE KEY");
  expect(text).not.toContain("correct horse");
  const [record] = parseRecords(text);
  expect(record).toMatchObject({ resource: REDACTED, principal_id: REDACTED, attributes: { shares: "3" } });
});

test("fail-closed: an event that cannot be written rejects with AUDIT_EMITTER_WRITE_FAILED naming the file", async () => {
  const emitter = createAuditEmitter(fileConfig({ file: "/dev/full", failMode: "closed" }), { logger: silent });
  const error = await rejectionOf(emitter.record("seal"), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_WRITE_FAILED");
  expect(error.subject).toBe("/dev/full");
  expect(error.canRetry).toBe(true);
  expect(emitter.healthy).toBe(false);
  await emitter.close();
});

test("fail-open: the same failure resolves, is counted, and the emitter becomes healthy after a good write", async () => {
  const config = fileConfig({ file: join(dir.path, "missing-dir", "audit.jsonl") });
  const emitter = createAuditEmitter(config, { logger: silent });
  await emitter.record("seal");
  expect(emitter.stats()).toMatchObject({ recordsWritten: 0, recordsFailed: 1 });
  expect(emitter.healthy).toBe(false);
  await rename(await tempDir("late").then((late) => late.path), join(dir.path, "missing-dir"));
  await emitter.record("unseal");
  expect(emitter.stats()).toMatchObject({ recordsWritten: 1, recordsFailed: 1 });
  expect(emitter.healthy).toBe(true);
  await emitter.close();
  expect((await recordsIn(config.file ?? "")).map((r) => r.action)).toEqual(["kms.unseal"]);
});

test("rotation: records written across a rename land in the old file then the new one, none lost or split", async () => {
  const config = fileConfig();
  const path = config.file ?? "";
  const emitter = createAuditEmitter(config, { logger: silent });
  await Promise.all(Array.from({ length: 100 }, (_, i) => emitter.record("rotation", { resource: `a${i}` })));
  await rename(path, `${path}.1`);
  await Promise.all(Array.from({ length: 100 }, (_, i) => emitter.record("rotation", { resource: `b${i}` })));
  await emitter.close();
  const old = await recordsIn(`${path}.1`);
  const fresh = await recordsIn(path);
  expect(old.map((r) => r.resource)).toEqual(Array.from({ length: 100 }, (_, i) => `a${i}`));
  expect(fresh.map((r) => r.resource)).toEqual(Array.from({ length: 100 }, (_, i) => `b${i}`));
});

const child = join(import.meta.dir, "support", "emit-child.ts");

test("stdout sink: 2 000 concurrent events from a child process are 2 000 whole JSONL lines", async () => {
  const {
    code,
    stdout: out,
    stderr: err,
  } = await runCommand([process.execPath, child], {
    env: { ...process.env, SVC_AUDIT_LOG_SINK: "stdout", EMIT_COUNT: "2000" },
  });
  expect(code).toBe(0);
  const records = parseRecords(out);
  expect(records).toHaveLength(2000);
  expect(new Set(records.map((r) => r.resource)).size).toBe(2000);
  expect(JSON.parse(err.trim())).toMatchObject({ recordsWritten: 2000, recordsFailed: 0, rejected: 0 });
});

test("stdout sink, fail-closed: a stdout that cannot be written (/dev/full) rejects every event", async () => {
  const proc = Bun.spawn([process.execPath, child], {
    env: { ...process.env, SVC_AUDIT_LOG_SINK: "stdout", SVC_AUDIT_FAIL_MODE: "closed", EMIT_COUNT: "10" },
    stdout: Bun.file("/dev/full"),
    stderr: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(0);
  expect(JSON.parse(err.trim())).toMatchObject({ recordsWritten: 0, recordsFailed: 10, rejected: 10, healthy: false });
});

test("a record that cannot be encoded (an invalid Date) is refused in fail-closed and counted in fail-open", async () => {
  const closed = createAuditEmitter(fileConfig({ failMode: "closed" }), { logger: silent });
  const error = await rejectionOf(closed.record("seal", { time: new Date(Number.NaN) }), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_RECORD_INVALID");
  await closed.close();
  const open = createAuditEmitter(fileConfig(), { logger: silent });
  await open.record("seal", { time: new Date(Number.NaN) });
  expect(open.stats()).toMatchObject({ recordsInvalid: 1, recordsWritten: 0 });
  await open.close();
});

test("stdout sink, fail-open: a reader that went away (EPIPE) costs the records, not the process", async () => {
  const script = `"${process.execPath}" "${child}" | head -c 10 > /dev/null; exit \${PIPESTATUS[0]}`;
  const proc = Bun.spawn(["bash", "-c", script], {
    env: { ...process.env, SVC_AUDIT_LOG_SINK: "stdout", EMIT_COUNT: "5000" },
    stderr: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(0);
  const stats = JSON.parse(err.trim());
  expect(stats.recordsFailed).toBeGreaterThan(0);
  expect(stats.recordsWritten + stats.recordsFailed).toBe(5000);
  expect(stats.rejected).toBe(0);
});

/** `count` attributes `a00`, `a01`, … of `length` characters each. */
const bigAttributes = (count: number, length: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`a${String(i).padStart(2, "0")}`, "v".repeat(length)]));

test("a record longer than maxRecordBytes (default 64 KiB, the agent's line limit) is written with its attributes cut and marked", async () => {
  expect(EMITTER_DEFAULTS.maxRecordBytes).toBe(65_536);
  const config = fileConfig({ failMode: "closed" });
  const emitter = createAuditEmitter(config, { logger: silent });
  const fields = { resource: "keys/t1/big", principal_id: "svc-app", tenant_id: "t1", claimed_tenant_id: "t1" };
  // 32 attributes of 4 096 characters: ≈ 132 KB as one line, which the agent would dead-letter
  await emitter.record("rotation", { ...fields, attributes: bigAttributes(32, 4096) }); // fail-closed: resolves
  await emitter.record("rotation", { ...fields, attributes: bigAttributes(15, 4096) }); // ≈ 62 KB: fits as it is
  await emitter.close();
  const lines = (await readFile(config.file ?? "", "utf8")).trimEnd().split("\n");
  expect(lines.map((line) => Buffer.byteLength(line) <= 65_536)).toEqual([true, true]);
  const [cut, whole] = await recordsIn(config.file ?? "");
  expect(cut).toMatchObject({ action: "kms.key.rotate", result: "ok", source: "kms", ...fields });
  const kept = Object.keys(cut?.attributes ?? {});
  expect(kept[0]).toBe("truncated");
  expect(cut?.attributes?.truncated).toBe("attributes");
  // the others in their order, as many as fit: one more would not have
  const names = kept.slice(1);
  expect(names).toEqual(Object.keys(bigAttributes(names.length, 1)));
  expect(names.length).toBeGreaterThan(10);
  expect(Buffer.byteLength(lines[0] ?? "") + `,"a99":"${"v".repeat(4096)}"`.length).toBeGreaterThan(65_536);
  expect(whole?.attributes).toEqual(bigAttributes(15, 4096));
  expect(emitter.stats()).toMatchObject({
    recordsWritten: 2,
    recordsTruncated: 1,
    attributesDropped: 32 - names.length,
  });
});

test("cutting is deterministic, honours a smaller maxRecordBytes, and the marker replaces a handler's own 'truncated'", async () => {
  const config = fileConfig({ maxRecordBytes: 16_384 });
  const emitter = createAuditEmitter(config, { logger: silent });
  // one attribute too large for the rest of the room, then small ones: those still go in
  const attributes = { truncated: "mine", first: "f", huge: "h".repeat(4096), ...bigAttributes(4, 4050), last: "l" };
  await emitter.record("seal", { attributes });
  await emitter.record("seal", { attributes });
  await emitter.close();
  const records = await recordsIn(config.file ?? "");
  const text = await readFile(config.file ?? "", "utf8");
  expect(text.split("\n").every((line) => Buffer.byteLength(line) <= 16_384)).toBe(true);
  expect(records[0]?.attributes).toEqual(records[1]?.attributes ?? {});
  expect(records[0]?.attributes).toEqual({
    truncated: "attributes",
    first: "f",
    huge: "h".repeat(4096),
    a00: "v".repeat(4050),
    a01: "v".repeat(4050),
    last: "l",
  });
  expect(emitter.stats()).toMatchObject({ recordsTruncated: 2, attributesDropped: 6 });
});

test("a hand-built config with a maxRecordBytes the other fields may not fit in is refused", () => {
  const error = thrownBy(
    () => createAuditEmitter(fileConfig({ maxRecordBytes: 1000 }), { logger: silent }),
    AuditEmitterError,
  );
  expect(error.code).toBe("AUDIT_EMITTER_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUDIT_LOG_MAX_RECORD_BYTES");
});

test("a hand-built config with a rotation size under 1 MiB or no generation kept is refused", () => {
  for (const [rotate, subject] of [
    [{ bytes: 1000, keep: 2 }, "SVC_AUDIT_LOG_ROTATE_BYTES"],
    [{ bytes: 2 ** 20, keep: 0 }, "SVC_AUDIT_LOG_ROTATE_KEEP"],
  ] as const) {
    const error = thrownBy(() => createAuditEmitter(fileConfig({ rotate }), { logger: silent }), AuditEmitterError);
    expect({ code: error.code, subject: error.subject }).toEqual({ code: "AUDIT_EMITTER_CONFIG_INVALID", subject });
  }
});
