import type { Caller } from "@svc/auth";
import { invalidArgument } from "./errors.ts";

/**
 * The tenant whose records a call may read: always the verified token's `tenant_id` (@svc/auth has checked that
 * `x-tenant-id` equals it). With auth disabled (test environments only) the header is all there is.
 */
export function tenantOf(caller: Caller | undefined, header: string | undefined): string {
  if (caller?.kind === "token") return caller.tenantId;
  if (!header) throw invalidArgument("x-tenant-id", "required");
  return header;
}
