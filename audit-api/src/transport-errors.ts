import { Metadata, type StatusObject, status } from "@grpc/grpc-js";
import { AuditApiError, type AuditApiErrorCode } from "./errors.ts";

const GRPC: Record<AuditApiErrorCode, status> = {
  AUDIT_API_CONFIG_INVALID: status.INTERNAL,
  AUDIT_API_INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  AUDIT_API_EXPORT_TOO_LARGE: status.RESOURCE_EXHAUSTED,
  AUDIT_API_INDEX_FAILED: status.INTERNAL,
  AUDIT_API_OBJECT_READ_FAILED: status.INTERNAL,
  AUDIT_API_LISTEN_FAILED: status.INTERNAL,
  AUDIT_API_DISK_CACHE_FAILED: status.INTERNAL,
};

const HTTP: Record<AuditApiErrorCode, number> = {
  AUDIT_API_CONFIG_INVALID: 500,
  AUDIT_API_INVALID_ARGUMENT: 400,
  AUDIT_API_EXPORT_TOO_LARGE: 413,
  AUDIT_API_INDEX_FAILED: 500,
  AUDIT_API_OBJECT_READ_FAILED: 500,
  AUDIT_API_LISTEN_FAILED: 500,
  AUDIT_API_DISK_CACHE_FAILED: 500,
};

/** HTTP status of an error (a retriable storage failure is 503). */
export function httpStatusOf(error: AuditApiError): number {
  return error.canRetry && HTTP[error.code] === 500 ? 503 : HTTP[error.code];
}

/** `{ error: { code, message } }`, the body shape @svc/auth answers refusals with. */
export function errorResponse(error: unknown): Response {
  if (!(error instanceof AuditApiError)) {
    return Response.json({ error: { code: "INTERNAL", message: "internal error" } }, { status: 500 });
  }
  return Response.json({ error: { code: error.code, message: error.message } }, { status: httpStatusOf(error) });
}

/** gRPC status of an error: details `"<code>: <message>"`, trailer `x-audit-error-code`. */
export function grpcStatusOf(error: unknown): Partial<StatusObject> & { code: status; details: string } {
  const metadata = new Metadata();
  if (!(error instanceof AuditApiError)) return { code: status.INTERNAL, details: "internal error", metadata };
  metadata.set("x-audit-error-code", error.code);
  const code = error.canRetry && GRPC[error.code] === status.INTERNAL ? status.UNAVAILABLE : GRPC[error.code];
  return { code, details: `${error.code}: ${error.message}`, metadata };
}
