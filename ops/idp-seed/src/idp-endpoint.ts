import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { IdpSeedError } from "./errors.ts";

/** Where the IdP is and which realm / client to use: shared by the seed and the token helper (`@svc/token`). */
export const IdpEndpointEnvSchema = Type.Object({
  IDP_URL: Type.Optional(Type.String({ pattern: "^https?://[^/]+(/.*)?$" })),
  IDP_PORT: Type.Optional(Type.String({ pattern: "^[0-9]{1,5}$" })),
  IDP_REALM: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$" })),
  IDP_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  /** The local stack's Keycloak, from its env file (`ops/dev env`): used when neither IDP_URL nor IDP_PORT is set. */
  SVC_STACK_IDP_URL: Type.Optional(Type.String({ pattern: "^https?://[^/]+(/.*)?$" })),
});

export type IdpEndpointEnv = Static<typeof IdpEndpointEnvSchema>;

/** The spec's defaults: Keycloak on 127.0.0.1:8082, realm `svc`, CLI client `svc-cli`. */
export const IDP_ENDPOINT_DEFAULTS = { port: 8082, realm: "svc", clientId: "svc-cli" } as const;

export interface IdpEndpoint {
  /** Keycloak base URL without a trailing slash, e.g. `http://127.0.0.1:8082`. */
  url: string;
  realm: string;
  clientId: string;
}

/**
 * Parses the IdP URL, IDP_REALM and IDP_CLIENT_ID from an environment object; empty values count as unset, other
 * keys are ignored. The URL is IDP_URL, else 127.0.0.1:IDP_PORT, else the local stack's SVC_STACK_IDP_URL, else
 * 127.0.0.1:8082. A bad value throws IDP_SEED_CONFIG_INVALID naming its variable (`subject`).
 */
export function parseIdpEndpoint(env: Record<string, string | undefined>): IdpEndpoint {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(IdpEndpointEnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  const first = Value.Errors(IdpEndpointEnvSchema, picked).First();
  if (first) {
    const field = first.path.replace(/^\//, "") || "/";
    throw new IdpSeedError("IDP_SEED_CONFIG_INVALID", `${field}: ${first.message}`, { subject: field });
  }
  const valid = picked as IdpEndpointEnv;
  const port = valid.IDP_PORT === undefined ? IDP_ENDPOINT_DEFAULTS.port : Number(valid.IDP_PORT);
  if (port < 1 || port > 65535) {
    throw new IdpSeedError("IDP_SEED_CONFIG_INVALID", "IDP_PORT: expected 1..65535", { subject: "IDP_PORT" });
  }
  const url =
    valid.IDP_URL ?? (valid.IDP_PORT === undefined ? valid.SVC_STACK_IDP_URL : undefined) ?? `http://127.0.0.1:${port}`;
  return {
    url: url.replace(/\/+$/, ""),
    realm: valid.IDP_REALM ?? IDP_ENDPOINT_DEFAULTS.realm,
    clientId: valid.IDP_CLIENT_ID ?? IDP_ENDPOINT_DEFAULTS.clientId,
  };
}
