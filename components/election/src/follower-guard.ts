import {
  Metadata,
  type ServerDuplexStream,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Elector } from "./elector.ts";

/** Services that always pass: gRPC health checking and server reflection. */
const EXEMPT_PREFIXES = ["/grpc.health.v1.", "/grpc.reflection.v1.", "/grpc.reflection.v1alpha."];

export const isExemptPath = (path: string) => EXEMPT_PREFIXES.some((prefix) => path.startsWith(prefix));

/** The status a follower answers (spec: Errors): UNAVAILABLE, naming the holder, never forwarded. */
export function followerStatus(elector: Elector) {
  const { holder, identity } = elector.snapshot();
  const leader = holder && holder !== identity ? holder : "unknown";
  return {
    code: status.UNAVAILABLE,
    details: `not the leader (${identity} is a follower; current leader: ${leader})`,
    metadata: new Metadata(),
  };
}

/**
 * Wraps every handler of a business service so that it runs only while this replica serves (the leader within
 * its renew deadline, or an `active` replica with no election); otherwise the call ends with UNAVAILABLE before
 * the handler runs. A handler wrapper, like `@svc/auth`'s `authorizeService`, rather than a grpc-js
 * `ServerInterceptor` (grpc-js 1.14 hands the handler a different call object). Health and reflection methods
 * pass unwrapped, and so does any method of a definition whose paths are exempt.
 */
export function guardService(
  elector: Elector,
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
): UntypedServiceImplementation {
  const wrapped: UntypedServiceImplementation = {};
  for (const [method, spec] of Object.entries(definition)) {
    const handler = implementation[method];
    if (!handler) continue;
    wrapped[method] = isExemptPath(spec.path) ? handler : guardHandler(elector, handler, spec);
  }
  return wrapped;
}

function guardHandler(
  elector: Elector,
  handler: UntypedHandleCall,
  shape: { requestStream: boolean; responseStream: boolean },
): UntypedHandleCall {
  const fn = handler as (call: unknown, callback?: sendUnaryData<unknown>) => unknown;
  if (!shape.responseStream) {
    return ((call: unknown, callback: sendUnaryData<unknown>) => {
      if (!elector.isServing()) {
        callback(followerStatus(elector));
        return;
      }
      return fn(call, callback);
    }) as UntypedHandleCall;
  }
  return ((call: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>) => {
    if (!elector.isServing()) {
      call.emit("error", followerStatus(elector));
      return;
    }
    return fn(call);
  }) as UntypedHandleCall;
}
