import { isLocalHostUrl } from "./local-host.ts";

/**
 * The seeded users' password on the local stack when IDP_LOCAL_USER_PASSWORD is unset: what `ops/dev up` seeds and
 * what the token helper tries, so `bun run token issue` works on a fresh stack without any variable.
 */
export const LOCAL_USER_PASSWORD_DEFAULT = "svc-local-users";

/**
 * IDP_LOCAL_USER_PASSWORD as given, else the local default for an IdP on the local host; undefined for another
 * IdP, so a well-known password is never seeded into, or tried against, a shared one.
 */
export function localUserPassword(given: string | undefined, idpUrl: string): string | undefined {
  if (given !== undefined && given !== "") return given;
  return isLocalHostUrl(idpUrl) ? LOCAL_USER_PASSWORD_DEFAULT : undefined;
}
