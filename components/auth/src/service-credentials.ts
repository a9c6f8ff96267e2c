import { readSecretSetting } from "@svc/common";
import type { AuthConfig } from "./config.ts";
import { AuthConfigError } from "./errors.ts";

/** The client the HA components get their own tokens as (client-credentials grant; seeded by `@svc/idp-seed`). */
export const DEFAULT_SERVICE_CLIENT_ID = "svc-components";

/** A component's own client credentials at the IdP. Never logged: `clientSecret` is the secret itself. */
export interface ServiceCredentials {
  clientId: string;
  clientSecret: string;
}

const NO_WHITESPACE = /^[^\s]+$/;

/** The value, or undefined when unset or blank (as `parseAuthConfig` treats every `SVC_AUTH_*` variable). */
function given(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

/**
 * The credentials a component presents to the IdP for its own tokens, or `undefined` when auth is disabled (its
 * calls then carry no token). `SVC_AUTH_CLIENT_ID` (default `svc-components`) and exactly one of
 * `SVC_AUTH_CLIENT_SECRET` / `SVC_AUTH_CLIENT_SECRET_FILE` (read here, at start-up: `readSecretSetting` of
 * @svc/common, its last line ending dropped). Neither, both, an empty or unreadable file, or one ending in a further
 * line break → `AuthConfigError` naming the variable. The secret is never put into an error message.
 */
export function parseServiceCredentials(
  env: Record<string, string | undefined>,
  auth: AuthConfig,
): ServiceCredentials | undefined {
  if (auth.disabled) return undefined;
  const clientId = given(env, "SVC_AUTH_CLIENT_ID")?.trim() ?? DEFAULT_SERVICE_CLIENT_ID;
  if (!NO_WHITESPACE.test(clientId)) {
    throw new AuthConfigError("SVC_AUTH_CLIENT_ID", `must not contain whitespace, got ${JSON.stringify(clientId)}`);
  }
  const clientSecret = readSecretSetting(
    env,
    "SVC_AUTH_CLIENT_SECRET",
    (variable, message, cause) => new AuthConfigError(variable, message, cause),
    { what: `while auth is on: the secret of client ${clientId}`, bothNames: "file" },
  );
  return { clientId, clientSecret };
}
