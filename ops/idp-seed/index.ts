export { AdminClient, type AdminCredentials } from "./src/admin-client.ts";
export { COMPONENTS_CLIENT_SECRET_DEFAULT, componentsClientSecret } from "./src/components-client-secret.ts";
export { parseSeedConfig, SEED_DEFAULTS, type SeedOptions } from "./src/config.ts";
export { IDP_SEED_ERROR_CODES, IdpSeedError, type IdpSeedErrorCode } from "./src/errors.ts";
export {
  IDP_ENDPOINT_DEFAULTS,
  type IdpEndpoint,
  type IdpEndpointEnv,
  IdpEndpointEnvSchema,
  parseIdpEndpoint,
} from "./src/idp-endpoint.ts";
export { isLocalHostUrl } from "./src/local-host.ts";
export { LOCAL_USER_PASSWORD_DEFAULT, localUserPassword } from "./src/local-user-password.ts";
export {
  AUDIT_SCOPES,
  COMPONENTS_CLIENT,
  SEED_ROLES,
  SEED_USERS,
  type SeedRole,
  type SeedUser,
  USER_ATTRIBUTES,
} from "./src/seed-plan.ts";
export { seedRealm } from "./src/seed-realm.ts";
export { formatSeedReport, type SeedAction, type SeedItem, type SeedReport } from "./src/seed-report.ts";
