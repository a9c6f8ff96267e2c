import type { Caller } from "@svc/auth";

/**
 * The tenant whose records a call may read: always the caller's, as @svc/auth established it — the verified
 * token's `tenant_id` (auth has checked that `x-tenant-id` equals it), or with auth disabled (test environments
 * only) the anonymous caller of the `x-tenant-id` header.
 */
export function tenantOf(caller: Caller | undefined): string {
  if (!caller) throw new Error("tenantOf: no caller (a route outside the auth guard)");
  return caller.tenantId;
}
