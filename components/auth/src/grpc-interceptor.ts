import type {
  Metadata,
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  sendUnaryData,
  UntypedHandleCall,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { type AuthCore, TENANT_HEADER } from "./auth-core.ts";
import type { Caller } from "./caller.ts";
import type { Operation } from "./policy.ts";
import { authErrorStatus } from "./transport-errors.ts";

/**
 * gRPC adapter: a handler wrapper rather than a grpc-js `ServerInterceptor`, because an interceptor cannot hand an
 * object to the handler (the handler's `call` is a different object from the interceptor's), while a wrapper can:
 * it checks the call's metadata with the core, records the caller for `callerOf(call)`, then runs the handler.
 * Refusals end the call with UNAUTHENTICATED / PERMISSION_DENIED / UNAVAILABLE before the handler runs.
 */

type AnyServerCall =
  | ServerUnaryCall<unknown, unknown>
  | ServerReadableStream<unknown, unknown>
  | ServerWritableStream<unknown, unknown>
  | ServerDuplexStream<unknown, unknown>;

const callers = new WeakMap<object, Caller>();

/** The verified caller of a call that went through `withAuth` / `authorizeService`. */
export function callerOf(call: object): Caller {
  const caller = callers.get(call);
  if (!caller) throw new Error("callerOf: this call did not pass through the auth wrapper");
  return caller;
}

function firstString(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === "string" ? value : undefined;
}

function authRequest(call: AnyServerCall) {
  return {
    authorization: firstString(call.metadata, "authorization"),
    tenantId: firstString(call.metadata, TENANT_HEADER),
  };
}

/** Wraps one handler of the given shape (from the method definition) with the auth check for `operation`. */
export function withAuth(
  core: AuthCore,
  operation: Operation,
  handler: UntypedHandleCall,
  shape: { requestStream: boolean; responseStream: boolean } = { requestStream: false, responseStream: false },
): UntypedHandleCall {
  const fn = handler as (call: AnyServerCall, callback?: sendUnaryData<unknown>) => void;
  if (!shape.responseStream) {
    // unary and client-streaming: refuse through the callback
    return ((call: AnyServerCall, callback: sendUnaryData<unknown>) => {
      core.check(authRequest(call), operation).then(
        (caller) => {
          callers.set(call, caller);
          fn(call, callback);
        },
        (error: unknown) => callback(authErrorStatus(error)),
      );
    }) as UntypedHandleCall;
  }
  // server-streaming and bidi: grpc-js turns an 'error' event into the call's status
  return ((call: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>) => {
    core.check(authRequest(call), operation).then(
      (caller) => {
        callers.set(call, caller);
        fn(call);
      },
      (error: unknown) => call.emit("error", authErrorStatus(error)),
    );
  }) as UntypedHandleCall;
}

/**
 * Wraps every handler of a service. `operations` maps each method name of `definition` (the key in the service
 * definition, e.g. `list_events`) to a policy operation; a method without a mapping is a start-up error, so no
 * method is ever served unchecked by accident.
 */
export function authorizeService(
  core: AuthCore,
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  operations: Readonly<Record<string, Operation>>,
): UntypedServiceImplementation {
  const wrapped: UntypedServiceImplementation = {};
  for (const [method, spec] of Object.entries(definition)) {
    const handler = implementation[method];
    if (!handler) continue;
    const operation = operations[method];
    if (!operation) throw new Error(`authorizeService: method ${method} has no operation in the auth map`);
    wrapped[method] = withAuth(core, operation, handler, spec);
  }
  for (const method of Object.keys(operations)) {
    if (!(method in definition)) throw new Error(`authorizeService: ${method} is not a method of the service`);
  }
  return wrapped;
}
