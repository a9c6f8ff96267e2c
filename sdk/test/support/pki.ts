import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  caCert: string;
  /** A second CA that did not issue the server certificate. */
  otherCaCert: string;
  serverKey: string;
  serverCert: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  const result = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr.toString()}`);
}

/** A throwaway CA and a server certificate for localhost / 127.0.0.1 (openssl CLI, P-256, valid 2 days). */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "sdk-pki-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=sdk-test-ca",
  ]);
  openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "other.key",
    "-out",
    "other.pem",
    "-days",
    "2",
    "-subj",
    "/CN=other-ca",
  ]);
  openssl(dir, ["req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]);
  const ext = "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
  writeFileSync(join(dir, "ext.cnf"), ext);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  ]);
  return {
    dir,
    caCert: join(dir, "ca.pem"),
    otherCaCert: join(dir, "other.pem"),
    serverKey: join(dir, "server.key"),
    serverCert: join(dir, "server.pem"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
