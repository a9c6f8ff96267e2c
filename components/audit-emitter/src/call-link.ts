import type { Metadata, ServiceDefinition, UntypedHandleCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { callerOf } from "@svc/auth";

/**
 * The link from a grpc-js server interceptor to the handler's `call`. grpc-js 1.14 gives interceptors and handlers
 * different call objects, and `@svc/auth` keeps the verified caller by the handler's call (`callerOf(call)`), so
 * the interceptor cannot see the caller by itself. Both do hold the same request `Metadata` object (grpc-js builds
 * the handler's call with the metadata the interceptors passed on), so `withAuditIdentity` registers
 * metadata → handler call as each handler starts, and the interceptor reads `callerOf` through it when the call ends.
 */
const handlerCalls = new WeakMap<Metadata, object>();

/** Registers the handler's call under its metadata. Idempotent. */
export function linkHandlerCall(call: { readonly metadata: Metadata }): void {
  handlerCalls.set(call.metadata, call);
}

/** Whether a handler call was linked under this metadata (`withAuditIdentity` ran for the call). */
export function isLinked(metadata: Metadata): boolean {
  return handlerCalls.has(metadata);
}

/** The verified caller's identity for the call with this metadata; empty strings when auth did not accept one. */
export function verifiedIdentityOf(metadata: Metadata): { principal_id: string; tenant_id: string } {
  const call = handlerCalls.get(metadata);
  if (call === undefined) return { principal_id: "", tenant_id: "" };
  try {
    const caller = callerOf(call);
    return { principal_id: caller.principalId, tenant_id: caller.tenantId };
  } catch {
    // auth did not run, or refused the caller: no verified identity
    return { principal_id: "", tenant_id: "" };
  }
}

/**
 * Wraps every handler of a service so that its call is linked for the audit interceptor; the handler runs
 * unchanged, with the same arguments. Put it around (or inside) `@svc/auth`'s `authorizeService`:
 *
 *   server.addService(def, withAuditIdentity(def, authorizeService(auth, def, impl, operations)))
 */
export function withAuditIdentity(
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
): UntypedServiceImplementation {
  const wrapped: UntypedServiceImplementation = {};
  for (const method of Object.keys(definition)) {
    const handler = implementation[method] as
      | ((call: { metadata: Metadata }, ...rest: unknown[]) => unknown)
      | undefined;
    if (!handler) continue;
    wrapped[method] = ((call: { metadata: Metadata }, ...rest: unknown[]) => {
      linkHandlerCall(call);
      return handler(call, ...rest);
    }) as UntypedHandleCall;
  }
  return wrapped;
}
