import { checkRoles } from "./check-roles.ts";
import { type IdpClientOptions, tokenRequest } from "./token-request.ts";
import type { TokenSet } from "./token-set.ts";

export const DEFAULT_SCOPE = "openid profile email";

export interface IssueRequest {
  user: string;
  password: string;
  /** Extra scopes, space-separated (e.g. `audit:read audit:export offline_access`), appended to the default set. */
  scope?: string;
}

/** The requested scope: the spec's default set plus the extra scopes, each once. */
export function scopeFor(extra?: string): string {
  const all = `${DEFAULT_SCOPE} ${extra ?? ""}`.split(/\s+/).filter((s) => s !== "");
  return [...new Set(all)].join(" ");
}

/** A token for a user by password grant on the CLI client; a seeded user's token must carry its realm roles. */
export async function issueToken(options: IdpClientOptions, request: IssueRequest): Promise<TokenSet> {
  const set = await tokenRequest(options, {
    grant_type: "password",
    username: request.user,
    password: request.password,
    scope: scopeFor(request.scope),
  });
  checkRoles(set.access_token, request.user);
  return set;
}
