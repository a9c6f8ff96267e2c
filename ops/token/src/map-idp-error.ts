import { TokenError } from "./errors.ts";

export const ADVICE = {
  httpsRequired: "use https (or, on the IdP host itself, the helper adds X-Forwarded-Proto: https)",
  accountNotSetUp:
    "remove the pending required action (e.g. Update password) from the user in the admin console, or re-run the seed",
  invalidCredentials:
    "check the user name and IDP_LOCAL_USER_PASSWORD; after a rotation re-run the seed (bun run idp:seed)",
  refreshInvalid: "issue a new token (token issue --user <name> --scope offline_access)",
  rolesMissing: "re-run the seed (bun run idp:seed) and reissue cached tokens",
} as const;

/** Maps an IdP token endpoint error answer (`error`, `error_description`) to a coded error with the spec's advice. */
export function mapIdpError(status: number, body: Record<string, unknown>, grantType: string): TokenError {
  const error = typeof body.error === "string" ? body.error : undefined;
  const description = typeof body.error_description === "string" ? body.error_description : undefined;
  const idpError = { ...(error && { error }), ...(description && { description }) };
  const said = `the IdP answered HTTP ${status}: ${error ?? "?"}${description ? ` (${description})` : ""}`;
  if (description === "HTTPS required") {
    return new TokenError("IDP_HTTPS_REQUIRED", said, { advice: ADVICE.httpsRequired, idpError });
  }
  if (error === "invalid_grant" && description === "Account is not fully set up") {
    return new TokenError("IDP_ACCOUNT_NOT_SET_UP", said, { advice: ADVICE.accountNotSetUp, idpError });
  }
  if (error === "invalid_grant" && description === "Invalid user credentials") {
    return new TokenError("IDP_INVALID_CREDENTIALS", said, { advice: ADVICE.invalidCredentials, idpError });
  }
  if (error === "invalid_grant" && grantType === "refresh_token") {
    return new TokenError("IDP_REFRESH_TOKEN_INVALID", said, { advice: ADVICE.refreshInvalid, idpError });
  }
  return new TokenError("IDP_TOKEN_REQUEST_FAILED", said, { idpError });
}
