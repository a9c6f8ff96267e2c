import { SvcError } from "@svc/common";
import type { Caller } from "./caller.ts";

/** Stable codes of every refusal the auth module produces. Tests and callers branch on these, never on messages. */
export const AUTH_ERROR_CODES = [
  "AUTH_CONFIG_INVALID",
  "AUTH_TOKEN_MISSING",
  "AUTH_TOKEN_MALFORMED",
  "AUTH_TOKEN_TOO_LARGE",
  "AUTH_ALG_NOT_ALLOWED",
  "AUTH_SIGNATURE_INVALID",
  "AUTH_TOKEN_EXPIRED",
  "AUTH_TOKEN_NOT_YET_VALID",
  "AUTH_ISSUER_MISMATCH",
  "AUTH_AUDIENCE_MISMATCH",
  "AUTH_WRONG_TOKEN_TYPE",
  "AUTH_UNKNOWN_KEY",
  "AUTH_CLAIM_MISSING",
  "AUTH_TENANT_HEADER_MISSING",
  "AUTH_TENANT_HEADER_INVALID",
  "AUTH_TENANT_MISMATCH",
  "AUTH_PERMISSION_DENIED",
  "AUTH_IDP_UNAVAILABLE",
  "AUTH_SERVICE_CREDENTIALS_REJECTED",
] as const;

export type AuthErrorCode = (typeof AUTH_ERROR_CODES)[number];

/** How a refusal is reported: 401/UNAUTHENTICATED, 403/PERMISSION_DENIED or 503/UNAVAILABLE. */
export type AuthErrorKind = "unauthenticated" | "permission-denied" | "unavailable";

const KIND_OF: Record<Exclude<AuthErrorCode, "AUTH_CONFIG_INVALID">, AuthErrorKind> = {
  AUTH_TOKEN_MISSING: "unauthenticated",
  AUTH_TOKEN_MALFORMED: "unauthenticated",
  AUTH_TOKEN_TOO_LARGE: "unauthenticated",
  AUTH_ALG_NOT_ALLOWED: "unauthenticated",
  AUTH_SIGNATURE_INVALID: "unauthenticated",
  AUTH_TOKEN_EXPIRED: "unauthenticated",
  AUTH_TOKEN_NOT_YET_VALID: "unauthenticated",
  AUTH_ISSUER_MISMATCH: "unauthenticated",
  AUTH_AUDIENCE_MISMATCH: "unauthenticated",
  AUTH_WRONG_TOKEN_TYPE: "unauthenticated",
  AUTH_UNKNOWN_KEY: "unauthenticated",
  AUTH_CLAIM_MISSING: "unauthenticated",
  AUTH_TENANT_HEADER_MISSING: "permission-denied",
  AUTH_TENANT_HEADER_INVALID: "permission-denied",
  AUTH_TENANT_MISMATCH: "permission-denied",
  AUTH_PERMISSION_DENIED: "permission-denied",
  AUTH_IDP_UNAVAILABLE: "unavailable",
  // the IdP refused this process's own client credentials (service token source): fix the secret, a retry cannot
  AUTH_SERVICE_CREDENTIALS_REJECTED: "unauthenticated",
};

export type AuthRefusalCode = keyof typeof KIND_OF;

/** A refused request. `kind` decides the transport status; `code` is stable; the message never holds the token. */
export class AuthError extends SvcError<AuthRefusalCode> {
  readonly kind: AuthErrorKind;
  /**
   * The verified caller that was refused: by the policy (`authorize`) or for its tenant header (missing, invalid, not
   * the token's tenant); undefined when no caller was established (no token, a bad one, the IdP unreachable).
   */
  readonly caller: Caller | undefined;

  /** `subject`: the claim or header at fault, when there is one (`aud`, `tenant_id`, `x-tenant-id`, ...). */
  constructor(
    code: AuthRefusalCode,
    message: string,
    options: { subject?: string; cause?: unknown; caller?: Caller } = {},
  ) {
    // A retry can succeed only when the IdP was unreachable; a refused token stays refused.
    super(code, message, { subject: options.subject, cause: options.cause, canRetry: KIND_OF[code] === "unavailable" });
    this.kind = KIND_OF[code];
    this.caller = options.caller;
  }
}

/** A bad `SVC_AUTH_*` value: raised at start-up, names the env field (`subject`). */
export class AuthConfigError extends SvcError<"AUTH_CONFIG_INVALID"> {
  constructor(field: string, message: string, cause?: unknown) {
    super("AUTH_CONFIG_INVALID", `${field}: ${message}`, { subject: field, cause });
  }
}

export const isAuthError = (error: unknown): error is AuthError => error instanceof AuthError;
