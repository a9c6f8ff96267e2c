import type { Caller } from "./caller.ts";
import { AuthError } from "./errors.ts";

/** What an operation requires: at least one of `anyRole` (realm roles) AND every scope in `allScopes`. */
export interface Requirement {
  anyRole: readonly string[];
  allScopes: readonly string[];
}

/**
 * THE policy: every operation a server exposes, and what it requires. One table, read top to bottom; a server maps
 * its gRPC methods / HTTP routes onto these names. Roles are Keycloak realm roles (`realm_access.roles`), scopes
 * come from the token's `scope` claim. See README "Policy" for why each row is what it is.
 */
export const POLICY = {
  "endpoint.grpc": { anyRole: ["app"], allScopes: [] },
  "endpoint.topk": { anyRole: ["topk", "app"], allScopes: [] },
  "admin.indexes": { anyRole: ["ops"], allScopes: [] },
  "admin.keys": { anyRole: ["ops"], allScopes: [] },
  "admin.services": { anyRole: ["security"], allScopes: [] },
  "audit.list": { anyRole: ["security", "audit-only"], allScopes: ["audit:read"] },
  "audit.export": { anyRole: ["security", "audit-exporter"], allScopes: ["audit:export"] },
  "kms.keys.manage": { anyRole: ["keymanager"], allScopes: [] },
  "kms.keys.use": { anyRole: ["app", "keymanager"], allScopes: [] },
  "kms.pubkey.read": { anyRole: ["pubkey-reader", "keymanager"], allScopes: [] },
  "component.rpc": { anyRole: ["component"], allScopes: [] },
} as const satisfies Record<string, Requirement>;

export type Operation = keyof typeof POLICY;

export const OPERATIONS = Object.keys(POLICY) as Operation[];

export const isOperation = (name: string): name is Operation => Object.hasOwn(POLICY, name);

/**
 * Decides whether `caller` may perform `operation`; throws `AUTH_PERMISSION_DENIED` naming what is missing.
 * The anonymous caller (auth explicitly disabled) is allowed everything: that mode exists for test environments.
 */
export function authorize(caller: Caller, operation: Operation): void {
  const requirement: Requirement | undefined = POLICY[operation];
  if (!requirement) throw new AuthError("AUTH_PERMISSION_DENIED", `no policy for operation ${String(operation)}`);
  if (caller.kind === "anonymous") return;
  if (!requirement.anyRole.some((role) => caller.roles.includes(role))) {
    throw new AuthError("AUTH_PERMISSION_DENIED", `${operation} requires role ${requirement.anyRole.join(" or ")}`, {
      subject: "realm_access.roles",
      caller,
    });
  }
  const missing = requirement.allScopes.filter((scope) => !caller.scopes.includes(scope));
  if (missing.length > 0) {
    throw new AuthError("AUTH_PERMISSION_DENIED", `${operation} requires scope ${missing.join(" ")}`, {
      subject: "scope",
      caller,
    });
  }
}
