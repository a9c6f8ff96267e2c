import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { componentsClientSecret } from "./components-client-secret.ts";
import { IdpSeedError } from "./errors.ts";
import { IDP_ENDPOINT_DEFAULTS, parseIdpEndpoint } from "./idp-endpoint.ts";
import { localUserPassword } from "./local-user-password.ts";

const NonEmpty = Type.String({ minLength: 1 });

/**
 * The seed's own environment (spec: "Recommended rotation" and "Identity and access records"), next to the IdP
 * endpoint variables of `IdpEndpointEnvSchema`. Other keys are ignored.
 */
export const SeedEnvSchema = Type.Object({
  IDP_BOOTSTRAP_ADMIN_USER: Type.Optional(NonEmpty),
  IDP_BOOTSTRAP_ADMIN_PASSWORD: NonEmpty,
  /** Optional for an IdP on the local host only (`LOCAL_USER_PASSWORD_DEFAULT`). */
  IDP_LOCAL_USER_PASSWORD: Type.Optional(NonEmpty),
  IDP_LOCAL_TENANT_ID: Type.Optional(NonEmpty),
  /** Optional for an IdP on the local host only (`COMPONENTS_CLIENT_SECRET_DEFAULT`). */
  IDP_COMPONENTS_CLIENT_SECRET: Type.Optional(NonEmpty),
});

export type SeedEnv = Static<typeof SeedEnvSchema>;

export interface SeedOptions {
  /** Keycloak base URL, e.g. `http://127.0.0.1:8082`. */
  url: string;
  realm: string;
  clientId: string;
  adminUser: string;
  adminPassword: string;
  userPassword: string;
  tenantId: string;
  /** Secret of the confidential client `svc-components` (the HA components' own tokens). */
  componentsClientSecret: string;
}

export const SEED_DEFAULTS = {
  ...IDP_ENDPOINT_DEFAULTS,
  adminUser: "idpadmin",
  tenantId: "tenant-local",
} as const;

/** `value` of `variable` (undefined: none given and no local default, the IdP at `url` not being on the local host). */
function requiredOffLocalHost(variable: string, value: string | undefined, url: string): string {
  if (value !== undefined) return value;
  throw new IdpSeedError(
    "IDP_SEED_CONFIG_INVALID",
    `${variable}: required for an IdP that is not on the local host (${url})`,
    { subject: variable },
  );
}

/** Parses the seed's options from an environment object; a bad or missing value names its variable. */
export function parseSeedConfig(env: Record<string, string | undefined>): SeedOptions {
  const endpoint = parseIdpEndpoint(env);
  const picked: Record<string, string> = {};
  for (const key of Object.keys(SeedEnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  const first = Value.Errors(SeedEnvSchema, picked).First();
  if (first) {
    const field = first.path.replace(/^\//, "") || "/";
    throw new IdpSeedError("IDP_SEED_CONFIG_INVALID", `${field}: ${first.message}`, { subject: field });
  }
  const valid = picked as SeedEnv;
  const userPassword = requiredOffLocalHost(
    "IDP_LOCAL_USER_PASSWORD",
    localUserPassword(valid.IDP_LOCAL_USER_PASSWORD, endpoint.url),
    endpoint.url,
  );
  const componentsSecret = requiredOffLocalHost(
    "IDP_COMPONENTS_CLIENT_SECRET",
    componentsClientSecret(valid.IDP_COMPONENTS_CLIENT_SECRET, endpoint.url),
    endpoint.url,
  );
  return {
    ...endpoint,
    adminUser: valid.IDP_BOOTSTRAP_ADMIN_USER ?? SEED_DEFAULTS.adminUser,
    adminPassword: valid.IDP_BOOTSTRAP_ADMIN_PASSWORD,
    userPassword,
    tenantId: valid.IDP_LOCAL_TENANT_ID ?? SEED_DEFAULTS.tenantId,
    componentsClientSecret: componentsSecret,
  };
}
