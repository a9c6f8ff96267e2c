import { readFileSync } from "node:fs";
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

function readSecretFile(path: string): string {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new AuthConfigError("SVC_AUTH_CLIENT_SECRET_FILE", `cannot read ${JSON.stringify(path)} (${reason})`);
  }
  // a Kubernetes Secret mount or `echo secret > file`: the trailing newline is not part of the secret
  const secret = content.replace(/[\r\n]+$/, "");
  if (secret === "") {
    throw new AuthConfigError("SVC_AUTH_CLIENT_SECRET_FILE", `${JSON.stringify(path)} is empty`);
  }
  return secret;
}

/**
 * The credentials a component presents to the IdP for its own tokens, or `undefined` when auth is disabled (its
 * calls then carry no token). `SVC_AUTH_CLIENT_ID` (default `svc-components`) and exactly one of
 * `SVC_AUTH_CLIENT_SECRET` / `SVC_AUTH_CLIENT_SECRET_FILE` (read here, at start-up, trailing newline trimmed).
 * Neither, both, an empty or unreadable file → `AuthConfigError` naming the variable. The secret is never put into
 * an error message.
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
  const secret = given(env, "SVC_AUTH_CLIENT_SECRET");
  const file = given(env, "SVC_AUTH_CLIENT_SECRET_FILE")?.trim();
  if (secret !== undefined && file !== undefined) {
    throw new AuthConfigError(
      "SVC_AUTH_CLIENT_SECRET_FILE",
      "set either SVC_AUTH_CLIENT_SECRET or SVC_AUTH_CLIENT_SECRET_FILE, not both",
    );
  }
  if (secret === undefined && file === undefined) {
    throw new AuthConfigError(
      "SVC_AUTH_CLIENT_SECRET",
      `required while auth is on (the secret of client ${clientId}); or SVC_AUTH_CLIENT_SECRET_FILE naming a file ` +
        "that holds it",
    );
  }
  return { clientId, clientSecret: secret ?? readSecretFile(file as string) };
}
