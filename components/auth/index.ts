export {
  type AuthCore,
  type AuthCoreOptions,
  type AuthRequest,
  type AuthStats,
  createAuthCore,
} from "./src/auth-core.ts";
export {
  AUTHORIZATION_HEADER,
  bearerToken,
  type HeaderValue,
  MAX_BEARER_TOKEN_LENGTH,
  TENANT_HEADER,
  tenantHeader,
} from "./src/auth-headers.ts";
export { ANONYMOUS_PRINCIPAL_ID, anonymousCaller, type Caller, freezeCaller } from "./src/caller.ts";
export {
  ASYMMETRIC_ALGORITHMS,
  type AsymmetricAlgorithm,
  AUTH_DEFAULTS,
  AUTH_DISABLED_ACKNOWLEDGEMENT,
  AUTH_LIMITS,
  type AuthConfig,
  AuthEnvSchema,
  parseAuthConfig,
} from "./src/config.ts";
export { type BearerAuthOptions, bearerAuth } from "./src/elysia-plugin.ts";
export {
  AUTH_ERROR_CODES,
  AuthConfigError,
  AuthError,
  type AuthErrorCode,
  type AuthErrorKind,
  type AuthRefusalCode,
  isAuthError,
} from "./src/errors.ts";
export {
  type AnyServerCall,
  type AuthRefusal,
  type AuthWrapperOptions,
  authorizeService,
  callerOf,
  HANDLER_FAILED_STATUS,
  withAuth,
} from "./src/grpc-interceptor.ts";
export {
  createKeySource,
  type KeySource,
  type KeySourceOptions,
  type KeySourceStats,
  type ResolvedKey,
} from "./src/key-source.ts";
export { authorize, isOperation, OPERATIONS, type Operation, POLICY, type Requirement } from "./src/policy.ts";
export { assertRoutesCovered, type RouteCoverageOptions, type RouteTable } from "./src/route-coverage.ts";
export {
  DEFAULT_SERVICE_CLIENT_ID,
  parseServiceCredentials,
  type ServiceCredentials,
} from "./src/service-credentials.ts";
export { serviceTokenInterceptor } from "./src/service-token-interceptor.ts";
export {
  createServiceTokenSource,
  type ServiceToken,
  type ServiceTokenSource,
  type ServiceTokenSourceOptions,
} from "./src/service-token-source.ts";
export { TokenCache, tokenDigest } from "./src/token-cache.ts";
export { type AuthErrorBody, authErrorResponse, authErrorStatus } from "./src/transport-errors.ts";
export { type VerifyOptions, verifyAccessToken } from "./src/verify-access-token.ts";
