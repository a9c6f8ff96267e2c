import {
  Metadata,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { AuthCore, AuthRequest } from "./auth-core.ts";
import { AUTHORIZATION_HEADER, TENANT_HEADER } from "./auth-headers.ts";
import type { Caller } from "./caller.ts";
import { type AuthError, isAuthError } from "./errors.ts";
import type { Operation } from "./policy.ts";
import { authErrorStatus } from "./transport-errors.ts";

/**
 * gRPC adapter: a handler wrapper rather than a grpc-js `ServerInterceptor`, because an interceptor cannot hand an
 * object to the handler (the handler's `call` is a different object from the interceptor's), while a wrapper can:
 * it checks the call's metadata with the core, records the caller for `callerOf(call)`, then runs the handler.
 * Refusals end the call with UNAUTHENTICATED / PERMISSION_DENIED / UNAVAILABLE before the handler runs (after the
 * `onRefused` hook, for a service that records its refusals). A handler
 * that throws or returns a rejected promise ends the call with INTERNAL "handler failed" (logged, never the token),
 * since it runs inside a promise callback where grpc-js's own catch (UNKNOWN) cannot see it.
 */

export type AnyServerCall =
  | ServerUnaryCall<unknown, unknown>
  | ServerReadableStream<unknown, unknown>
  | ServerWritableStream<unknown, unknown>
  | ServerDuplexStream<unknown, unknown>;

/** A refused call as `onRefused` sees it; `error.caller` is the verified caller when the policy refused it. */
export interface AuthRefusal {
  error: AuthError;
  call: AnyServerCall;
  operation: Operation;
  /** `performance.now()` when the call arrived, before its token was checked (a record's `duration_ms` counts from it). */
  startedAt: number;
}

export interface AuthWrapperOptions {
  /**
   * Runs on each refusal before it is answered, and is awaited: a service that must record its refusals (the KMS's
   * permission-denied events) does it here. A hook that fails is logged; the refusal is answered all the same.
   */
  onRefused?: (refusal: AuthRefusal) => Promise<void> | void;
}

const callers = new WeakMap<object, Caller>();

/** The verified caller of a call that went through `withAuth` / `authorizeService`. */
export function callerOf(call: object): Caller {
  const caller = callers.get(call);
  if (!caller) throw new Error("callerOf: this call did not pass through the auth wrapper");
  return caller;
}

/** Every value of `key`, not just the first: the core refuses a repeated header (`auth-headers.ts`). */
function allValues(metadata: Metadata, key: string): string[] {
  return metadata.get(key).map((value) => (typeof value === "string" ? value : value.toString("latin1")));
}

function authRequest(call: AnyServerCall): AuthRequest {
  return {
    authorization: allValues(call.metadata, AUTHORIZATION_HEADER),
    tenantId: allValues(call.metadata, TENANT_HEADER),
  };
}

/** The status a call ends with when its handler throws or rejects (grpc-js alone would leave an async one hanging). */
export const HANDLER_FAILED_STATUS = { code: status.INTERNAL, details: "handler failed" } as const;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";

/** Runs `handler`; a synchronous throw or a rejected promise goes to `onFailure` instead of escaping unhandled. */
function runGuarded(handler: () => unknown, onFailure: (error: unknown) => void): void {
  let result: unknown;
  try {
    result = handler();
  } catch (error) {
    onFailure(error);
    return;
  }
  if (isThenable(result)) result.then(undefined, onFailure);
}

/** Wraps one handler of the given shape (from the method definition) with the auth check for `operation`. */
export function withAuth(
  core: AuthCore,
  operation: Operation,
  handler: UntypedHandleCall,
  shape: { requestStream: boolean; responseStream: boolean } = { requestStream: false, responseStream: false },
  options: AuthWrapperOptions = {},
): UntypedHandleCall {
  const fn = handler as (call: AnyServerCall, callback?: sendUnaryData<unknown>) => unknown;
  const reason = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  const logFailure = (error: unknown, answered: boolean) =>
    core.logger.error({ operation, reason: reason(error), answered }, "grpc: handler failed");
  const { onRefused } = options;
  /** Answers a refusal with `answer`, after the `onRefused` hook when there is one. */
  const refuse = (call: AnyServerCall, startedAt: number, error: unknown, answer: () => void): void => {
    if (!onRefused || !isAuthError(error)) {
      answer();
      return;
    }
    Promise.resolve()
      .then(() => onRefused({ error, call, operation, startedAt }))
      .catch((cause: unknown) => core.logger.error({ operation, reason: reason(cause) }, "grpc: onRefused failed"))
      .finally(answer);
  };
  if (!shape.responseStream) {
    // unary and client-streaming: refuse through the callback
    return ((call: AnyServerCall, callback: sendUnaryData<unknown>) => {
      const startedAt = performance.now();
      core.check(authRequest(call), operation).then(
        (caller) => {
          callers.set(call, caller);
          let answered = false;
          const answerOnce = ((...args: Parameters<sendUnaryData<unknown>>) => {
            if (answered) return;
            answered = true;
            callback(...args);
          }) as sendUnaryData<unknown>;
          runGuarded(
            () => fn(call, answerOnce),
            (error) => {
              logFailure(error, answered);
              answerOnce({ ...HANDLER_FAILED_STATUS, metadata: new Metadata() });
            },
          );
        },
        (error: unknown) => refuse(call, startedAt, error, () => callback(authErrorStatus(error))),
      );
    }) as UntypedHandleCall;
  }
  // server-streaming and bidi: grpc-js turns an 'error' event into the call's status
  return ((call: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>) => {
    const startedAt = performance.now();
    core.check(authRequest(call), operation).then(
      (caller) => {
        callers.set(call, caller);
        runGuarded(
          () => fn(call),
          (error) => {
            logFailure(error, call.writableEnded);
            if (!call.writableEnded) call.emit("error", { ...HANDLER_FAILED_STATUS, metadata: new Metadata() });
          },
        );
      },
      (error: unknown) => refuse(call, startedAt, error, () => call.emit("error", authErrorStatus(error))),
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
  options: AuthWrapperOptions = {},
): UntypedServiceImplementation {
  const wrapped: UntypedServiceImplementation = {};
  for (const [method, spec] of Object.entries(definition)) {
    const handler = implementation[method];
    if (!handler) continue;
    const operation = operations[method];
    if (!operation) throw new Error(`authorizeService: method ${method} has no operation in the auth map`);
    wrapped[method] = withAuth(core, operation, handler, spec, options);
  }
  for (const method of Object.keys(operations)) {
    if (!(method in definition)) throw new Error(`authorizeService: ${method} is not a method of the service`);
  }
  return wrapped;
}
