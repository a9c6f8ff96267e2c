export { isIpLiteral, isLoopbackHost, parseAddress } from "./src/address.ts";
export {
  type ClientOptions,
  ClientOptionsSchema,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CLIENT_ID,
  DEFAULT_REALM,
  DEFAULT_RENEW_BEFORE_SECONDS,
  type IdpOptions,
  type RenewedTokens,
  resolveClientOptions,
} from "./src/client-options.ts";
export { SDK_ERROR_CODES, SdkError, type SdkErrorCode } from "./src/errors.ts";
export { toSdkError } from "./src/grpc-error.ts";
export { type RefreshedTokens, refreshAccessToken } from "./src/refresh-access-token.ts";
export { createClient, SvcClient } from "./src/svc-client.ts";
export {
  EXPIRY_SKEW_MS,
  MAX_TIMER_DELAY_MS,
  RETRY_MAX_MS,
  RETRY_MIN_MS,
  type RenewalTimers,
  TokenSource,
  type TokenSourceOptions,
} from "./src/token-source.ts";
