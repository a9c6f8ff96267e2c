import { type ServiceError, status } from "@grpc/grpc-js";
import type { TargetSettings } from "./client-options.ts";
import { SdkError } from "./errors.ts";

/** TLS client hello answered by a plaintext HTTP/2 server (BoringSSL / OpenSSL / Node wordings). */
const NOT_TLS =
  /WRONG_VERSION_NUMBER|wrong version number|packet length too long|http request|unknown protocol|before secure TLS connection was established|ECONNRESET/i;
/** The server spoke TLS but its certificate was not trusted or did not match the host. */
const CERT_REJECTED =
  /unable to verify|self[- ]signed|certificate|CERT_|altnames|UNABLE_TO_GET_ISSUER|DEPTH_ZERO_SELF_SIGNED/i;

/** `<CODE>: message` — how the plane's servers (@svc/auth, the audit API, the KMS) word their status details. */
const SERVER_CODE = /^([A-Z][A-Z0-9_]{2,63}): /;

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number";
}

/** Maps a grpc-js call failure to a typed SDK error; TLS failures of the first connection get their own codes. */
export function toSdkError(error: unknown, target: TargetSettings): SdkError {
  if (error instanceof SdkError) return error;
  if (!isServiceError(error)) {
    return new SdkError("SDK_CALL_FAILED", `call to ${target.address} failed: ${String(error)}`, {}, { cause: error });
  }
  const details = error.details || error.message;
  const grpcCode = error.code;
  const serverCode = SERVER_CODE.exec(details)?.[1];
  const on = `${target.address}`;
  switch (error.code) {
    case status.UNAVAILABLE:
      if (target.secure && NOT_TLS.test(details)) {
        return new SdkError(
          "SDK_TLS_HANDSHAKE_FAILED",
          `TLS handshake with ${on} failed: the server does not speak TLS (${details}). ` +
            `For a non-TLS endpoint (the default endpoint on port 50050 has no TLS) pass \`${target.secureOption}: false\`.`,
          { grpcCode, subject: target.secureOption },
          { cause: error },
        );
      }
      if (target.secure && CERT_REJECTED.test(details)) {
        return new SdkError(
          "SDK_TLS_CERT_REJECTED",
          `TLS handshake with ${on} failed: the server certificate was rejected (${details}). ` +
            `Pass \`${target.caOption}\` with the path of the root CA that issued it, and dial a name or IP the certificate lists.`,
          { grpcCode, subject: target.caOption },
          { cause: error },
        );
      }
      return new SdkError(
        "SDK_UNAVAILABLE",
        `${on} is unavailable: ${details}`,
        { grpcCode, serverCode },
        { cause: error },
      );
    case status.UNAUTHENTICATED:
      return new SdkError(
        "SDK_UNAUTHENTICATED",
        `${on} rejected the credentials: ${details}`,
        { grpcCode, serverCode },
        { cause: error },
      );
    case status.PERMISSION_DENIED:
      return new SdkError(
        "SDK_PERMISSION_DENIED",
        `${on} denied the call: ${details}`,
        { grpcCode, serverCode },
        { cause: error },
      );
    case status.DEADLINE_EXCEEDED:
      return new SdkError(
        "SDK_DEADLINE_EXCEEDED",
        `call to ${on} timed out: ${details}`,
        { grpcCode, serverCode },
        { cause: error },
      );
    default:
      return new SdkError(
        "SDK_CALL_FAILED",
        `call to ${on} failed with ${status[error.code] ?? error.code}: ${details}`,
        { grpcCode, serverCode },
        { cause: error },
      );
  }
}
