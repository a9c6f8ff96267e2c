import { Metadata, type StatusObject, status } from "@grpc/grpc-js";
import { AuthError, type AuthErrorKind } from "./errors.ts";

/** JSON body of every HTTP refusal. */
export interface AuthErrorBody {
  error: { code: string; message: string };
}

const HTTP_STATUS: Record<AuthErrorKind, number> = {
  unauthenticated: 401,
  "permission-denied": 403,
  unavailable: 503,
};

const GRPC_STATUS: Record<AuthErrorKind, status> = {
  unauthenticated: status.UNAUTHENTICATED,
  "permission-denied": status.PERMISSION_DENIED,
  unavailable: status.UNAVAILABLE,
};

/** An `AuthError` as an HTTP response: 401 (+ `WWW-Authenticate`), 403 or 503, body `{ error: { code, message } }`. */
export function authErrorResponse(error: unknown): Response {
  if (!(error instanceof AuthError)) {
    return Response.json({ error: { code: "INTERNAL", message: "internal error" } } satisfies AuthErrorBody, {
      status: 500,
    });
  }
  const headers = new Headers({ "content-type": "application/json" });
  if (error.kind === "unauthenticated") {
    headers.set("www-authenticate", `Bearer error="invalid_token", error_description="${error.code}"`);
  }
  const body: AuthErrorBody = { error: { code: error.code, message: error.message } };
  return new Response(JSON.stringify(body), { status: HTTP_STATUS[error.kind], headers });
}

/** An `AuthError` as a gRPC status (details = message, metadata `x-auth-error-code` = code). */
export function authErrorStatus(error: unknown): Partial<StatusObject> & { code: status; details: string } {
  const metadata = new Metadata();
  if (!(error instanceof AuthError)) return { code: status.INTERNAL, details: "internal error", metadata };
  metadata.set("x-auth-error-code", error.code);
  return { code: GRPC_STATUS[error.kind], details: `${error.code}: ${error.message}`, metadata };
}
