import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type IdpEndpoint, IdpSeedError, localUserPassword, parseIdpEndpoint } from "@svc/idp-seed";
import { TokenError } from "./errors.ts";

/**
 * The helper's own environment, next to the IdP endpoint variables (IDP_URL, IDP_PORT, SVC_STACK_IDP_URL,
 * IDP_REALM, IDP_CLIENT_ID) that `parseIdpEndpoint` of `@svc/idp-seed` reads for both tools. Other keys are ignored.
 */
export const TokenEnvSchema = Type.Object({
  IDP_LOCAL_USER_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
  /** A refresh token for `refresh` (kept out of the command line, where `ps` and /proc would show it). */
  SVC_REFRESH_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
});

export interface TokenConfig extends IdpEndpoint {
  /** The shared user password, needed by `issue` only: IDP_LOCAL_USER_PASSWORD, else the local stack's default
   * (`LOCAL_USER_PASSWORD_DEFAULT` of `@svc/idp-seed`) for an IdP on the local host; undefined for another IdP. */
  userPassword: string | undefined;
  /** From SVC_REFRESH_TOKEN; one of the sources `refresh` takes. */
  refreshToken: string | undefined;
}

function endpointOf(env: Record<string, string | undefined>): IdpEndpoint {
  try {
    return parseIdpEndpoint(env);
  } catch (error) {
    if (error instanceof IdpSeedError) {
      throw new TokenError("TOKEN_CONFIG_INVALID", error.message, {}, { cause: error });
    }
    throw error;
  }
}

/** Parses the helper's config from an environment object; a bad value names its variable. */
export function parseTokenConfig(env: Record<string, string | undefined>): TokenConfig {
  const endpoint = endpointOf(env);
  const picked: Record<string, string> = {};
  for (const key of Object.keys(TokenEnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  const first = Value.Errors(TokenEnvSchema, picked).First();
  if (first) {
    const field = first.path.replace(/^\//, "") || "/";
    throw new TokenError("TOKEN_CONFIG_INVALID", `${field}: ${first.message}`);
  }
  return {
    ...endpoint,
    userPassword: localUserPassword(picked.IDP_LOCAL_USER_PASSWORD, endpoint.url),
    refreshToken: picked.SVC_REFRESH_TOKEN,
  };
}
