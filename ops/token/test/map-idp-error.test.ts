import { expect, test } from "bun:test";
import { ADVICE, mapIdpError } from "../index.ts";

test.each([
  [
    { error: "invalid_request", error_description: "HTTPS required" },
    "password",
    "IDP_HTTPS_REQUIRED",
    ADVICE.httpsRequired,
  ],
  [
    { error: "invalid_grant", error_description: "Account is not fully set up" },
    "password",
    "IDP_ACCOUNT_NOT_SET_UP",
    ADVICE.accountNotSetUp,
  ],
  [
    { error: "invalid_grant", error_description: "Invalid user credentials" },
    "password",
    "IDP_INVALID_CREDENTIALS",
    ADVICE.invalidCredentials,
  ],
  [
    { error: "invalid_grant", error_description: "Token is not active" },
    "refresh_token",
    "IDP_REFRESH_TOKEN_INVALID",
    ADVICE.refreshInvalid,
  ],
  [{ error: "invalid_grant", error_description: "Something else" }, "password", "IDP_TOKEN_REQUEST_FAILED", undefined],
  [{}, "password", "IDP_TOKEN_REQUEST_FAILED", undefined],
])("the IdP answer %j to a %s grant maps to %s", (body, grant, code, advice) => {
  const error = mapIdpError(400, body, grant);
  expect(error.code).toBe(code as never);
  expect(error.advice).toBe(advice);
});
