/** What the seed puts into the realm (spec: "Identity and access records (in the IdP)"). */

export const SEED_ROLES = [
  "security",
  "ops",
  "app",
  "keymanager",
  "topk",
  "pubkey-reader",
  "audit-only",
  "audit-exporter",
  "component",
] as const;

export type SeedRole = (typeof SEED_ROLES)[number];

export interface SeedUser {
  username: string;
  firstName: string;
  lastName: string;
  principalId: string;
  realmRoles: readonly SeedRole[];
  /** Client roles as `[client id, role name]`, e.g. `realm-management` / `realm-admin`. */
  clientRoles: readonly (readonly [string, string])[];
}

export const SEED_USERS: readonly SeedUser[] = [
  { username: "app", firstName: "App", lastName: "User", principalId: "svc-app", realmRoles: ["app"], clientRoles: [] },
  { username: "ops", firstName: "Ops", lastName: "User", principalId: "svc-ops", realmRoles: ["ops"], clientRoles: [] },
  {
    username: "security",
    firstName: "Security",
    lastName: "User",
    principalId: "svc-security",
    realmRoles: ["security", "audit-only", "audit-exporter"],
    clientRoles: [],
  },
  {
    username: "svc-admin",
    firstName: "Realm",
    lastName: "Admin",
    principalId: "svc-admin",
    realmRoles: [],
    clientRoles: [["realm-management", "realm-admin"]],
  },
];

/** User attributes every token carries; declared in the realm's user profile so Keycloak keeps them. */
export const USER_ATTRIBUTES = ["principal_id", "tenant_id"] as const;

/** Optional client scopes of the CLI client, asked for with `scope=...`. */
export const AUDIT_SCOPES = ["audit:read", "audit:export"] as const;

/**
 * The HA components' own client (client-credentials grant only): its service account has the realm role
 * `component` (policy `component.rpc`, which no user has), and its tokens carry these hardcoded claims.
 */
export const COMPONENTS_CLIENT = {
  clientId: "svc-components",
  realmRole: "component",
  principalId: "svc-components",
  tenantId: "svc-internal",
} as const satisfies { clientId: string; realmRole: SeedRole; principalId: string; tenantId: string };
