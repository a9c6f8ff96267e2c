import { isLocalHostUrl } from "./local-host.ts";

/**
 * The secret of the components' client `svc-components` on the local stack when IDP_COMPONENTS_CLIENT_SECRET is
 * unset: what `ops/dev up` seeds and what the stack hands its components (`SVC_STACK_COMPONENTS_CLIENT_SECRET`).
 */
export const COMPONENTS_CLIENT_SECRET_DEFAULT = "svc-local-components";

/**
 * IDP_COMPONENTS_CLIENT_SECRET as given, else the local default for an IdP on the local host; undefined for another
 * IdP, so a well-known secret is never seeded into a shared one (the same rule as the users' password).
 */
export function componentsClientSecret(given: string | undefined, idpUrl: string): string | undefined {
  if (given !== undefined && given !== "") return given;
  return isLocalHostUrl(idpUrl) ? COMPONENTS_CLIENT_SECRET_DEFAULT : undefined;
}
