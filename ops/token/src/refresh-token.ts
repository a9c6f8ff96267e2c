import { checkRoles } from "./check-roles.ts";
import { type IdpClientOptions, tokenRequest } from "./token-request.ts";
import type { TokenSet } from "./token-set.ts";

/**
 * A new access token for a refresh token (e.g. an offline one from `offline_access`). The answer keeps the old
 * refresh token when the IdP sends none back.
 */
export async function refreshToken(options: IdpClientOptions, refresh: string): Promise<TokenSet> {
  const set = await tokenRequest(options, { grant_type: "refresh_token", refresh_token: refresh });
  checkRoles(set.access_token);
  return { ...set, refresh_token: set.refresh_token ?? refresh };
}
