import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { pino } from "pino";

export const DAY = 86_400;
export const NOW = new Date("2025-01-01T00:00:00Z");
export const NOW_S = NOW.getTime() / 1000;

export interface Fixture {
  dir: string;
  publicKeyPem: string;
  publicKeyJwk: JWK;
  publicKeyFile: string;
  /** The key that signs the fixture's licenses: it must never be accepted as the verification key. */
  privateKey: CryptoKey;
  privateKeyJwk: JWK;
  /** A key pair's public key that signed nothing. */
  otherPublicKeyPem: string;
  /** Signs the claims with the fixture's private key and writes them to `<dir>/<name>`. */
  writeLicense(name: string, claims: JWTPayload, alg?: string): Promise<string>;
  write(name: string, text: string): string;
  remove(): void;
}

export async function makeFixture(alg: "RS256" | "ES256" | "EdDSA" = "ES256"): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "license-"));
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const other = await generateKeyPair(alg, { extractable: true });
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const publicKeyPem = await exportSPKI(publicKey);
  return {
    dir,
    publicKeyPem,
    publicKeyJwk: await exportJWK(publicKey),
    publicKeyFile: write("license.pub.pem", publicKeyPem),
    privateKey,
    privateKeyJwk: await exportJWK(privateKey),
    otherPublicKeyPem: await exportSPKI(other.publicKey),
    async writeLicense(name, claims) {
      const token = await new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(privateKey);
      return write(name, `${token}\n`);
    },
    write,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface CapturedLog {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A pino logger whose JSON lines are kept in memory. */
export function captureLogger() {
  const lines: CapturedLog[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as CapturedLog) });
  return { logger, lines, warnings: () => lines.filter((line) => line.level === 40) };
}
