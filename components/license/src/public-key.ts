import { createPublicKey, type KeyObject } from "node:crypto";
import { importJWK, importSPKI, type JWK } from "jose";
import { LicenseError } from "./errors.ts";

/** Signature algorithms a license may use; the configured key decides which one of them applies. */
export const LICENSE_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type LicenseAlgorithm = (typeof LICENSE_ALGORITHMS)[number];

export interface LicenseKey {
  key: CryptoKey;
  /** The one algorithm accepted for this key (an RSA key never verifies an ES256 token, and so on). */
  algorithm: LicenseAlgorithm;
}

function algorithmOf(key: KeyObject): LicenseAlgorithm | undefined {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "ES256";
  return undefined;
}

/** Any PEM private key label: `PRIVATE KEY` (PKCS#8), `RSA` / `EC` / `DSA` / `OPENSSH PRIVATE KEY`, `ENCRYPTED ...`. */
const PRIVATE_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/**
 * `createPublicKey` happily derives the public half from a private PEM or JWK, so a private key must be refused
 * before it: the license private key signs licenses and must never sit on a service host.
 */
function isPrivateKey(source: string | JWK): boolean {
  return typeof source === "string" ? PRIVATE_PEM.test(source) : source.d !== undefined;
}

/** Imports the license public key (SPKI PEM or JWK) and fixes the algorithm it verifies. */
export async function importLicenseKey(source: string | JWK, where: string): Promise<LicenseKey> {
  if (isPrivateKey(source)) {
    throw new LicenseError(
      "LICENSE_KEY_INVALID",
      `the license key ${where} is a private key; configure the license PUBLIC key (and keep the private key off this host)`,
      where,
    );
  }
  let parsed: KeyObject;
  try {
    parsed =
      typeof source === "string"
        ? createPublicKey({ key: source, format: "pem" })
        : createPublicKey({ key: source as Record<string, string>, format: "jwk" });
  } catch (cause) {
    throw new LicenseError("LICENSE_KEY_INVALID", `the license public key ${where} is not a valid public key`, where, {
      cause,
    });
  }
  const algorithm = algorithmOf(parsed);
  if (!algorithm) {
    throw new LicenseError(
      "LICENSE_KEY_INVALID",
      `the license public key ${where} has an unsupported type (accepted: RSA, EC P-256, Ed25519)`,
      where,
    );
  }
  const key =
    typeof source === "string"
      ? await importSPKI(parsed.export({ type: "spki", format: "pem" }).toString(), algorithm)
      : await importJWK(source, algorithm);
  if (!(key instanceof CryptoKey)) {
    throw new LicenseError("LICENSE_KEY_INVALID", `the license public key ${where} is not an asymmetric key`, where);
  }
  return { key, algorithm };
}
