import { readFile } from "node:fs/promises";
import { decodeProtectedHeader, errors, type JWK, type JWTPayload, jwtVerify } from "jose";
import type { Logger } from "pino";
import { LicenseError } from "./errors.ts";
import { importLicenseKey } from "./public-key.ts";

export const DEFAULT_WARN_DAYS = 30;
const DAY_MS = 86_400_000;

export interface VerifyLicenseOptions {
  /** Path of the license token (`token.jwt`). Read once, at start. */
  path: string;
  /** Public key as SPKI PEM text. Exactly one of publicKeyPem / publicKeyJwk / publicKeyFile. */
  publicKeyPem?: string;
  publicKeyJwk?: JWK;
  /** Path of a file holding the SPKI PEM public key. */
  publicKeyFile?: string;
  /** Clock for the expiry checks (default: now). */
  now?: Date;
  /** Log a warning when the license expires within this many days (spec: replace 30 days before expiry). */
  warnDays?: number;
  logger: Pick<Logger, "warn" | "info">;
}

export interface License {
  subject: string;
  expiresAt: Date;
  /** Whole days until expiry (rounded down). */
  daysLeft: number;
  claims: JWTPayload;
}

async function readText(
  path: string,
  what: string,
  code: "LICENSE_UNREADABLE" | "LICENSE_KEY_INVALID",
): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? String(cause);
    throw new LicenseError(code, `cannot read the ${what} ${path} (${reason})`, path, { cause });
  }
}

async function licenseKey(options: VerifyLicenseOptions) {
  const given = [options.publicKeyPem, options.publicKeyJwk, options.publicKeyFile].filter((v) => v !== undefined);
  if (given.length !== 1) {
    throw new LicenseError(
      "LICENSE_KEY_INVALID",
      "give exactly one license public key: publicKeyPem, publicKeyJwk or publicKeyFile",
    );
  }
  if (options.publicKeyFile !== undefined) {
    const pem = await readText(options.publicKeyFile, "license public key file", "LICENSE_KEY_INVALID");
    return importLicenseKey(pem, options.publicKeyFile);
  }
  return importLicenseKey(options.publicKeyPem ?? options.publicKeyJwk ?? "", "(configured)");
}

function mapJoseError(error: unknown, path: string): LicenseError {
  if (error instanceof errors.JWTExpired) {
    const exp = typeof error.payload.exp === "number" ? new Date(error.payload.exp * 1000).toISOString() : "?";
    return new LicenseError("LICENSE_EXPIRED", `the license ${path} expired at ${exp}`, path, { cause: error });
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) {
    return new LicenseError(
      "LICENSE_INVALID_SIGNATURE",
      `the license ${path} is not signed by the configured license key`,
      path,
      { cause: error },
    );
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "nbf") {
    return new LicenseError("LICENSE_NOT_YET_VALID", `the license ${path} is not valid yet (nbf)`, path, {
      cause: error,
    });
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "exp") {
    return new LicenseError("LICENSE_MALFORMED", `the license ${path} has no valid exp claim`, path, { cause: error });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new LicenseError("LICENSE_MALFORMED", `the license ${path} is not a valid signed JWT (${reason})`, path, {
    cause: error,
  });
}

/**
 * Reads the license token once, verifies its signature with the configured public key (RS256 / ES256 / EdDSA,
 * the algorithm fixed by the key), requires `exp`, and warns when it expires within `warnDays`. The file is not
 * watched: a replaced `token.jwt` takes effect only after a restart.
 */
export async function verifyLicense(options: VerifyLicenseOptions): Promise<License> {
  const path = options.path;
  const now = options.now ?? new Date();
  const warnDays = options.warnDays ?? DEFAULT_WARN_DAYS;
  const key = await licenseKey(options);
  const token = (await readText(path, "license file", "LICENSE_UNREADABLE")).trim();
  try {
    decodeProtectedHeader(token);
  } catch (cause) {
    throw new LicenseError("LICENSE_MALFORMED", `the license ${path} is not a JWT (compact JWS)`, path, { cause });
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key.key, {
      algorithms: [key.algorithm],
      currentDate: now,
      requiredClaims: ["exp"],
    }));
  } catch (error) {
    throw mapJoseError(error, path);
  }
  // requiredClaims ["exp"] makes jwtVerify refuse a missing exp, and jose refuses a non-numeric one (both
  // LICENSE_MALFORMED via mapJoseError), so exp is a number here.
  const expiresAt = new Date((payload.exp as number) * 1000);
  const msLeft = expiresAt.getTime() - now.getTime();
  const daysLeft = Math.floor(msLeft / DAY_MS);
  const license: License = { subject: payload.sub ?? "", expiresAt, daysLeft, claims: payload };
  if (msLeft <= warnDays * DAY_MS) {
    options.logger.warn(
      { event: "license_expiring", path, subject: license.subject, expiresAt: expiresAt.toISOString(), daysLeft },
      `license ${path} expires in ${daysLeft} days (${expiresAt.toISOString()}): replace token.jwt and restart the service`,
    );
  } else {
    options.logger.info(
      { event: "license_valid", path, subject: license.subject, expiresAt: expiresAt.toISOString(), daysLeft },
      "license verified",
    );
  }
  return license;
}
