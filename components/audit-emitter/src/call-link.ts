import type { Metadata, ServiceDefinition, UntypedHandleCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { type AuthRefusal, type Caller, callerOf } from "@svc/auth";

/**
 * The link from a grpc-js server interceptor to the handler's `call`. grpc-js 1.14 gives interceptors and handlers
 * different call objects, and `@svc/auth` keeps the verified caller by the handler's call (`callerOf(call)`), so
 * the interceptor cannot see the caller by itself. Both do hold the same request `Metadata` object (grpc-js builds
 * the handler's call with the metadata the interceptors passed on), so `withAuditIdentity` registers
 * metadata → handler call as each handler starts, and the interceptor reads `callerOf` through it when the call ends.
 */
const handlerCalls = new WeakMap<Metadata, object>();
/** Handler call → the verified caller `@svc/auth`'s policy refused (PERMISSION_DENIED), kept by `linkRefusedCaller`. */
const refusedCallers = new WeakMap<object, Caller>();

/** Registers the handler's call under its metadata. Idempotent. */
export function linkHandlerCall(call: { readonly metadata: Metadata }): void {
  handlerCalls.set(call.metadata, call);
}

/** Whether a handler call was linked under this metadata (`withAuditIdentity` ran for the call). */
export function isLinked(metadata: Metadata): boolean {
  return handlerCalls.has(metadata);
}

/**
 * An `onRefused` hook for `@svc/auth`'s `authorizeService`: keeps the caller a refusal carries (`error.caller`, set
 * when the policy refused a verified caller: PERMISSION_DENIED), so the call's record names who tried. auth awaits
 * the hook before it answers, so the caller is kept before the interceptor sees the status. The tenant-header
 * refusals carry the verified caller too; a refusal without one (no or a bad token) keeps nothing.
 *
 *   authorizeService(auth, def, impl, operations, { onRefused: linkRefusedCaller })
 */
export function linkRefusedCaller(refusal: Pick<AuthRefusal, "error" | "call">): void {
  if (refusal.error.caller) refusedCallers.set(refusal.call, refusal.error.caller);
}

/**
 * The verified caller's identity for the call with this metadata: the caller auth accepted, else the caller its
 * policy refused (`linkRefusedCaller`); empty strings when no caller was verified.
 */
export function verifiedIdentityOf(metadata: Metadata): { principal_id: string; tenant_id: string } {
  const call = handlerCalls.get(metadata);
  if (call === undefined) return { principal_id: "", tenant_id: "" };
  let caller: Caller | undefined = refusedCallers.get(call);
  if (caller === undefined) {
    try {
      caller = callerOf(call);
    } catch {
      // auth did not run, or refused the call before it verified a caller: no verified identity
      return { principal_id: "", tenant_id: "" };
    }
  }
  return { principal_id: caller.principalId, tenant_id: caller.tenantId };
}

/**
 * Wraps every handler of a service so that its call is linked for the audit interceptor; the handler runs
 * unchanged, with the same arguments. Put it around `@svc/auth`'s `authorizeService`, with `linkRefusedCaller` as its
 * `onRefused` hook so that a PERMISSION_DENIED record names the refused caller too:
 *
 *   server.addService(
 *     def,
 *     withAuditIdentity(def, authorizeService(auth, def, impl, operations, { onRefused: linkRefusedCaller })),
 *   )
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
