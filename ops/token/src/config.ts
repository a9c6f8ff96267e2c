import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { TokenError } from "./errors.ts";

/** The helper's environment; other keys are ignored. */
export const TokenEnvSchema = Type.Object({
  IDP_URL: Type.Optional(Type.String({ pattern: "^https?://[^/]+(/.*)?$" })),
  IDP_PORT: Type.Optional(Type.String({ pattern: "^[0-9]{1,5}$" })),
  IDP_REALM: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$" })),
  IDP_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  IDP_LOCAL_USER_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
});

export interface TokenConfig {
  url: string;
  realm: string;
  clientId: string;
  /** The shared user password; needed by `issue` only. */
  userPassword: string | undefined;
}

/** Parses the helper's config from an environment object; a bad value names its variable. */
export function parseTokenConfig(env: Record<string, string | undefined>): TokenConfig {
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
  const port = picked.IDP_PORT === undefined ? 8082 : Number(picked.IDP_PORT);
  if (port < 1 || port > 65535) throw new TokenError("TOKEN_CONFIG_INVALID", "IDP_PORT: expected 1..65535");
  return {
    url: (picked.IDP_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ""),
    realm: picked.IDP_REALM ?? "svc",
    clientId: picked.IDP_CLIENT_ID ?? "svc-cli",
    userPassword: picked.IDP_LOCAL_USER_PASSWORD,
  };
}
