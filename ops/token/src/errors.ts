import { SvcError } from "@svc/common";

/** Stable codes of the token helper's failures; tests assert on these, never on message text. */
export const TOKEN_ERROR_CODES = [
  "TOKEN_CONFIG_INVALID",
  "TOKEN_FILE_INSECURE",
  "TOKEN_FILE_INVALID",
  "IDP_UNREACHABLE",
  "IDP_HTTPS_REQUIRED",
  "IDP_ACCOUNT_NOT_SET_UP",
  "IDP_INVALID_CREDENTIALS",
  "IDP_REFRESH_TOKEN_INVALID",
  "IDP_ROLES_MISSING",
  "IDP_TOKEN_REQUEST_FAILED",
] as const;

export type TokenErrorCode = (typeof TOKEN_ERROR_CODES)[number];

export class TokenError extends SvcError<TokenErrorCode> {
  /** What the operator should do (the spec's advice), when there is one. */
  readonly advice: string | undefined;
  /** The IdP's `error` / `error_description`, when the IdP answered. */
  readonly idpError: { error?: string; description?: string } | undefined;

  constructor(
    code: TokenErrorCode,
    message: string,
    details: { advice?: string; idpError?: { error?: string; description?: string }; subject?: string } = {},
    options?: ErrorOptions,
  ) {
    super(code, message, { subject: details.subject, canRetry: code === "IDP_UNREACHABLE", cause: options?.cause });
    this.advice = details.advice;
    this.idpError = details.idpError;
  }
}
