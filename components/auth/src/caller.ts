/** Who is calling, as established by a verified access token (or the explicit anonymous caller when auth is off). */
export interface Caller {
  /** `"token"`: from a verified access token; `"anonymous"`: auth disabled (`SVC_AUTH_DISABLED=true`). */
  kind: "token" | "anonymous";
  principalId: string;
  tenantId: string;
  /** `realm_access.roles` of the token. */
  roles: string[];
  /** The `scope` claim split on whitespace. */
  scopes: string[];
  /** `sub` claim, when the token has one. */
  subject: string | undefined;
  /** `exp` of the token; `null` for the anonymous caller. */
  tokenExpiresAt: Date | null;
}

export const ANONYMOUS_PRINCIPAL_ID = "anonymous";

/** The caller used when auth is disabled: no roles, tenant taken from `x-tenant-id`. */
export function anonymousCaller(tenantId: string): Caller {
  return {
    kind: "anonymous",
    principalId: ANONYMOUS_PRINCIPAL_ID,
    tenantId,
    roles: [],
    scopes: [],
    subject: undefined,
    tokenExpiresAt: null,
  };
}
