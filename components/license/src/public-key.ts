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

/** Imports the license public key (SPKI PEM or JWK) and fixes the algorithm it verifies. */
export async function importLicenseKey(source: string | JWK, where: string): Promise<LicenseKey> {
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
  if (parsed.type !== "public") {
    throw new LicenseError("LICENSE_KEY_INVALID", `the license public key ${where} is not a public key`, where);
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
