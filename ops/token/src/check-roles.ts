import { SEED_USERS } from "@svc/idp-seed";
import { TokenError } from "./errors.ts";
import { ADVICE } from "./map-idp-error.ts";
import { decodeClaims } from "./token-set.ts";

/**
 * For a seeded user (`app`, `ops`, `security`), the access token must carry the user's realm roles in
 * `realm_access.roles`; otherwise the realm was not seeded (or was changed) since: IDP_ROLES_MISSING.
 */
export function checkRoles(accessToken: string, username?: string): void {
  const claims = decodeClaims(accessToken);
  const user = username ?? (typeof claims.preferred_username === "string" ? claims.preferred_username : undefined);
  const expected = SEED_USERS.find((u) => u.username === user)?.realmRoles ?? [];
  const access = claims.realm_access as { roles?: unknown } | undefined;
  const roles = Array.isArray(access?.roles) ? access.roles : [];
  const missing = expected.filter((role) => !roles.includes(role));
  if (missing.length > 0) {
    throw new TokenError(
      "IDP_ROLES_MISSING",
      `the token of ${user} lacks the realm role(s) ${missing.join(", ")} (has: ${roles.join(", ") || "none"})`,
      { advice: ADVICE.rolesMissing },
    );
  }
}
