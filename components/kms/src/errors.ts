import { Metadata, type StatusObject, status } from "@grpc/grpc-js";
import { SvcError } from "@svc/common";

/** Every code of @svc/kms (docs/kms.md "Errors"); tests assert on these, never on message text. */
export const KMS_ERROR_CODES = [
  /** A setting is missing or wrong; `subject` names the env variable. */
  "KMS_CONFIG_INVALID",
  /** The store is empty and `SVC_KMS_BOOTSTRAP` is `never`. */
  "KMS_NOT_BOOTSTRAPPED",
  /** A second bootstrap: the store already has its master key. */
  "KMS_ALREADY_BOOTSTRAPPED",
  /** The passphrase does not unwrap the master key. */
  "KMS_PASSPHRASE_WRONG",
  /** Key use while the master key is sealed. */
  "KMS_SEALED",
  /** A request field is wrong; `subject` names it. */
  "KMS_INVALID_ARGUMENT",
  /** No such key or version in the caller's tenant. */
  "KMS_KEY_NOT_FOUND",
  /** `GenerateKey` of a name in use. */
  "KMS_KEY_EXISTS",
  /** Any use of a revoked key. */
  "KMS_KEY_REVOKED",
  /** The key's kind cannot do this (encrypt with a signing key, ...). */
  "KMS_WRONG_KEY_KIND",
  /** The ciphertext does not authenticate under this key, tenant, version and associated data. */
  "KMS_DECRYPT_FAILED",
  /** PostgreSQL could not be reached or answered an error (`canRetry`). */
  "KMS_STORE_UNAVAILABLE",
  /** Fail-closed: a key event could not be recorded. */
  "KMS_AUDIT_FAILED",
  /** The HTTP or gRPC address could not be bound. */
  "KMS_LISTEN_FAILED",
] as const;

export type KmsErrorCode = (typeof KMS_ERROR_CODES)[number];

export class KmsError extends SvcError<KmsErrorCode> {}

const GRPC: Record<KmsErrorCode, status> = {
  KMS_CONFIG_INVALID: status.INTERNAL,
  KMS_NOT_BOOTSTRAPPED: status.FAILED_PRECONDITION,
  KMS_ALREADY_BOOTSTRAPPED: status.ALREADY_EXISTS,
  KMS_PASSPHRASE_WRONG: status.INVALID_ARGUMENT,
  KMS_SEALED: status.FAILED_PRECONDITION,
  KMS_INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  KMS_KEY_NOT_FOUND: status.NOT_FOUND,
  KMS_KEY_EXISTS: status.ALREADY_EXISTS,
  KMS_KEY_REVOKED: status.FAILED_PRECONDITION,
  KMS_WRONG_KEY_KIND: status.FAILED_PRECONDITION,
  KMS_DECRYPT_FAILED: status.INVALID_ARGUMENT,
  KMS_STORE_UNAVAILABLE: status.UNAVAILABLE,
  KMS_AUDIT_FAILED: status.UNAVAILABLE,
  KMS_LISTEN_FAILED: status.INTERNAL,
};

const HTTP: Record<number, number> = {
  [status.INVALID_ARGUMENT]: 400,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.FAILED_PRECONDITION]: 409,
  [status.UNAVAILABLE]: 503,
};

/** A field of a request that is wrong: the message starts with the field's name. */
export function invalidArgument(field: string, message: string): KmsError {
  return new KmsError("KMS_INVALID_ARGUMENT", `${field}: ${message}`, { subject: field });
}

/** The gRPC status code a KMS error is answered with. */
export const grpcCodeOf = (error: KmsError): status => GRPC[error.code];

/** gRPC status of an error: details `"<code>: <message>"`, trailer `x-kms-error-code`. Other errors are INTERNAL. */
export function kmsErrorStatus(error: unknown): Partial<StatusObject> & { code: status; details: string } {
  const metadata = new Metadata();
  if (!(error instanceof KmsError)) return { code: status.INTERNAL, details: "internal error", metadata };
  metadata.set("x-kms-error-code", error.code);
  return { code: GRPC[error.code], details: `${error.code}: ${error.message}`, metadata };
}

/** HTTP status of a KMS error (500 for anything else). */
export const httpStatusOf = (error: unknown): number =>
  error instanceof KmsError ? (HTTP[GRPC[error.code]] ?? 500) : 500;
