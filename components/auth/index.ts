export {
  type AuthCore,
  type AuthCoreOptions,
  type AuthRequest,
  type AuthStats,
  createAuthCore,
  TENANT_HEADER,
} from "./src/auth-core.ts";
export { ANONYMOUS_PRINCIPAL_ID, anonymousCaller, type Caller } from "./src/caller.ts";
export {
  ASYMMETRIC_ALGORITHMS,
  type AsymmetricAlgorithm,
  AUTH_DEFAULTS,
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
export { authorizeService, callerOf, HANDLER_FAILED_STATUS, withAuth } from "./src/grpc-interceptor.ts";
export { createKeySource, type KeySource, type KeySourceOptions, type KeySourceStats } from "./src/key-source.ts";
export { authorize, isOperation, OPERATIONS, type Operation, POLICY, type Requirement } from "./src/policy.ts";
export { assertRoutesCovered, type RouteCoverageOptions, type RouteTable } from "./src/route-coverage.ts";
export { TokenCache, tokenDigest } from "./src/token-cache.ts";
export { type AuthErrorBody, authErrorResponse, authErrorStatus } from "./src/transport-errors.ts";
export { bearerToken, type VerifyOptions, verifyAccessToken } from "./src/verify-access-token.ts";
