import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { KmsError, parseKmsConfig } from "../index.ts";

const BASE = {
  SVC_KMS_PG_URL: "postgres://svc@127.0.0.1:5432/svc",
  SVC_KMS_PASSPHRASE: "a-long-enough-passphrase",
  SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc",
  HOME: "/home/kms",
};

const refusal = (env: Record<string, string>) => thrownBy(() => parseKmsConfig(env), KmsError);

test("defaults: port 50090, TLS on, bootstrap never, the KMS's own audit file, fail-closed", () => {
  const config = parseKmsConfig(BASE);
  expect(config).toMatchObject({
    grpcPort: 50_090,
    httpPort: 8090,
    schema: "kms",
    bootstrap: "never",
    instance: "kms",
  });
  expect(parseKmsConfig({ ...BASE, HOSTNAME: "kms-0" }).instance).toBe("kms-0");
  expect(config.tls).toMatchObject({
    enabled: true,
    certDays: 30,
    caExportPath: "/home/kms/.local/state/svc-ops/kms/kms-root-ca.pem",
  });
  expect(config.tls.san).toEqual([
    { type: "dns", value: "localhost" },
    { type: "ip", value: "127.0.0.1" },
    { type: "ip", value: "::1" },
  ]);
  expect(config.audit).toMatchObject({ source: "kms", sink: "file", failMode: "closed" });
  expect(config.passphrase).toBe(BASE.SVC_KMS_PASSPHRASE);
});

test("the audit log: the default file, another file, or stdout alone (no file); a file with stdout is refused naming it", () => {
  expect(parseKmsConfig(BASE).audit).toMatchObject({
    sink: "file",
    file: "/home/kms/.local/state/svc-ops/kms/audit.jsonl",
  });
  expect(parseKmsConfig({ ...BASE, SVC_AUDIT_LOG_FILE: "/var/log/kms/audit.jsonl" }).audit).toMatchObject({
    sink: "file",
    file: "/var/log/kms/audit.jsonl",
  });
  expect(parseKmsConfig({ ...BASE, SVC_AUDIT_LOG_SINK: "stdout" }).audit).toMatchObject({
    sink: "stdout",
    file: undefined,
    failMode: "closed",
  });
  const both = refusal({ ...BASE, SVC_AUDIT_LOG_SINK: "stdout", SVC_AUDIT_LOG_FILE: "/var/log/kms/audit.jsonl" });
  expect(both.subject).toBe("SVC_AUDIT_LOG_FILE");
});

test("plaintext only when SVC_KMS_TLS=false is set", () => {
  expect(parseKmsConfig({ ...BASE, SVC_KMS_TLS: "false" }).tls.enabled).toBe(false);
  expect(refusal({ ...BASE, SVC_KMS_TLS: "no" }).subject).toBe("SVC_KMS_TLS");
});

test("a bad value names its variable; a passphrase is never printed", () => {
  expect(refusal({ ...BASE, SVC_KMS_PORT: "5009x" }).subject).toBe("SVC_KMS_PORT");
  expect(refusal({ ...BASE, SVC_KMS_HOST: "0.0.0.0:50090" }).subject).toBe("SVC_KMS_HOST");
  expect(refusal({ ...BASE, SVC_KMS_HTTP_HOST: "https://kms" }).subject).toBe("SVC_KMS_HTTP_HOST");
  expect(refusal({ ...BASE, SVC_KMS_PG_SCHEMA: "Bad-Name" }).subject).toBe("SVC_KMS_PG_SCHEMA");
  expect(refusal({ ...BASE, SVC_KMS_CA_EXPORT_PATH: "relative/ca.pem" }).subject).toBe("SVC_KMS_CA_EXPORT_PATH");
  const short = refusal({ ...BASE, SVC_KMS_PASSPHRASE: "short-pass" });
  expect(short.subject).toBe("SVC_KMS_PASSPHRASE");
  expect(short.message).not.toContain("short-pass");
  expect(refusal({ ...BASE, SVC_AUDIT_FAIL_MODE: "maybe" }).subject).toBe("SVC_AUDIT_FAIL_MODE");
  expect(refusal({ ...BASE, SVC_AUTH_ISSUER: "" }).code).toBe("KMS_CONFIG_INVALID");
});

test("the secret: exactly one of the variable and the file; the file's trailing newline is dropped", () => {
  const dir = mkdtempSync(join(tmpdir(), "kms-config-"));
  try {
    const file = join(dir, "passphrase");
    writeFileSync(file, "passphrase-from-a-file\n", { mode: 0o600 });
    const { SVC_KMS_PASSPHRASE: _, ...withoutValue } = BASE;
    expect(parseKmsConfig({ ...withoutValue, SVC_KMS_PASSPHRASE_FILE: file }).passphrase).toBe(
      "passphrase-from-a-file",
    );
    expect(refusal({ ...BASE, SVC_KMS_PASSPHRASE_FILE: file }).subject).toBe("SVC_KMS_PASSPHRASE");
    expect(refusal(withoutValue).subject).toBe("SVC_KMS_PASSPHRASE");
    expect(refusal({ ...withoutValue, SVC_KMS_PASSPHRASE_FILE: join(dir, "missing") }).subject).toBe(
      "SVC_KMS_PASSPHRASE_FILE",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("main exits 2 printing the bad variable, before connecting to anything", async () => {
  const child = Bun.spawn(["bun", "run", join(import.meta.dir, "../src/main.ts")], {
    env: { PATH: process.env.PATH ?? "", ...BASE, SVC_KMS_PORT: "port" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  expect(code).toBe(2);
  expect(stderr).toContain("kms: SVC_KMS_PORT");
});
