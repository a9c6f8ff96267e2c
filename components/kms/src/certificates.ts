// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill loaded first.
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import * as x509 from "@peculiar/x509";
import type { SanEntry } from "./config.ts";

const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;
const CA_YEARS = 10;

export interface RootCa {
  certPem: string;
  /** PKCS#8 DER of the CA's private key: the caller wraps it under the master key at once. */
  privateKeyPkcs8: Buffer;
}

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
}

const serial = () =>
  randomBytes(16)
    .toString("hex")
    .replace(/^[89a-f]/, "1");

function pem(label: string, der: ArrayBuffer): string {
  const body =
    Buffer.from(der)
      .toString("base64")
      .match(/.{1,64}/g)
      ?.join("\n") ?? "";
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** The KMS's root CA (bootstrap): ECDSA P-256, self-signed, CA with path length 0, 10 years. */
export async function createRootCa(now = new Date()): Promise<RootCa> {
  const keys = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: "CN=svc KMS root CA",
    notBefore: now,
    notAfter: new Date(now.getTime() + CA_YEARS * 365 * DAY_MS),
    signingAlgorithm: EC,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const privateKeyPkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { certPem: cert.toString("pem"), privateKeyPkcs8 };
}

/** A fresh server key pair (memory only) and its certificate issued by the root CA for `san`, valid `days`. */
export async function issueServerCertificate(
  ca: { certPem: string; privateKeyPkcs8: Buffer },
  san: readonly SanEntry[],
  days: number,
  now = new Date(),
): Promise<ServerCertificate> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await crypto.subtle.importKey("pkcs8", new Uint8Array(ca.privateKeyPkcs8), EC, false, ["sign"]);
  const keys = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const first = san[0]?.value ?? "localhost";
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${first.replace(/[,=+<>#;"\\]/g, "")}`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + days * DAY_MS),
    signingAlgorithm: EC,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(san.map((entry) => ({ type: entry.type, value: entry.value }))),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return {
    certPem: cert.toString("pem"),
    keyPem: pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey)),
  };
}
