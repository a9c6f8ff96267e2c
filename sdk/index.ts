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
export { TokenSource, type TokenSourceOptions } from "./src/token-source.ts";
