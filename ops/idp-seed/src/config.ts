import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { IdpSeedError } from "./errors.ts";

const NonEmpty = Type.String({ minLength: 1 });

/** The seed's environment (spec: "Recommended rotation" and "Identity and access records"). Other keys are ignored. */
export const SeedEnvSchema = Type.Object({
  IDP_URL: Type.Optional(Type.String({ pattern: "^https?://[^/]+(/.*)?$" })),
  IDP_PORT: Type.Optional(Type.String({ pattern: "^[0-9]{1,5}$" })),
  IDP_REALM: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$" })),
  IDP_CLIENT_ID: Type.Optional(NonEmpty),
  IDP_BOOTSTRAP_ADMIN_USER: Type.Optional(NonEmpty),
  IDP_BOOTSTRAP_ADMIN_PASSWORD: NonEmpty,
  IDP_LOCAL_USER_PASSWORD: NonEmpty,
  IDP_LOCAL_TENANT_ID: Type.Optional(NonEmpty),
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
}

export const SEED_DEFAULTS = {
  port: 8082,
  realm: "svc",
  clientId: "svc-cli",
  adminUser: "idpadmin",
  tenantId: "tenant-local",
} as const;

/** Parses the seed's options from an environment object; a bad or missing value names its variable. */
export function parseSeedConfig(env: Record<string, string | undefined>): SeedOptions {
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
  const port = valid.IDP_PORT === undefined ? SEED_DEFAULTS.port : Number(valid.IDP_PORT);
  if (port < 1 || port > 65535) {
    throw new IdpSeedError("IDP_SEED_CONFIG_INVALID", "IDP_PORT: expected 1..65535", { subject: "IDP_PORT" });
  }
  return {
    url: (valid.IDP_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ""),
    realm: valid.IDP_REALM ?? SEED_DEFAULTS.realm,
    clientId: valid.IDP_CLIENT_ID ?? SEED_DEFAULTS.clientId,
    adminUser: valid.IDP_BOOTSTRAP_ADMIN_USER ?? SEED_DEFAULTS.adminUser,
    adminPassword: valid.IDP_BOOTSTRAP_ADMIN_PASSWORD,
    userPassword: valid.IDP_LOCAL_USER_PASSWORD,
    tenantId: valid.IDP_LOCAL_TENANT_ID ?? SEED_DEFAULTS.tenantId,
  };
}
