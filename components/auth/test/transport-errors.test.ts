import { expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { AUTH_ERROR_CODES, AuthError, type AuthErrorBody, authErrorResponse, authErrorStatus } from "../index.ts";

test("kinds map to 401/403/503 and UNAUTHENTICATED/PERMISSION_DENIED/UNAVAILABLE", async () => {
  const cases = [
    [new AuthError("AUTH_SIGNATURE_INVALID", "signature verification failed"), 401, status.UNAUTHENTICATED],
    [new AuthError("AUTH_TENANT_MISMATCH", "x-tenant-id does not match"), 403, status.PERMISSION_DENIED],
    [new AuthError("AUTH_IDP_UNAVAILABLE", "JWKS fetch failed"), 503, status.UNAVAILABLE],
  ] as const;
  for (const [error, http, grpc] of cases) {
    const response = authErrorResponse(error);
    expect(response.status).toBe(http);
    expect((await response.json()) as AuthErrorBody).toEqual({ error: { code: error.code, message: error.message } });
    expect(response.headers.has("www-authenticate")).toBe(http === 401);
    const grpcStatus = authErrorStatus(error);
    expect(grpcStatus.code).toBe(grpc);
    expect(grpcStatus.metadata?.get("x-auth-error-code")).toEqual([error.code]);
    expect(error.canRetry).toBe(http === 503);
  }
});

test("an error that is not an AuthError becomes 500 / INTERNAL without details", async () => {
  const response = authErrorResponse(new Error("boom at /secret/path"));
  expect(response.status).toBe(500);
  expect(((await response.json()) as AuthErrorBody).error.code).toBe("INTERNAL");
  const grpcStatus = authErrorStatus(new Error("boom"));
  expect(grpcStatus.code).toBe(status.INTERNAL);
  expect(grpcStatus.details).toBe("internal error");
});

test("every refusal code has a kind", () => {
  for (const code of AUTH_ERROR_CODES) {
    if (code === "AUTH_CONFIG_INVALID") continue;
    expect(["unauthenticated", "permission-denied", "unavailable"]).toContain(new AuthError(code, "x").kind);
  }
});
