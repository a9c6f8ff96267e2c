import {
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { Counter, Histogram, type Registry } from "prom-client";

/** Bounds of the call duration histogram, in seconds: sub-millisecond answers up to a backend job's 30 s. */
const GRPC_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** `OK`, `UNAVAILABLE`, … for a status code (the number itself for one grpc-js does not name). */
export const statusName = (code: number): string => status[code] ?? String(code);

/** `svc_grpc_server_calls_total{method, code}` in `registry`: the one definition both ways of counting serve. */
function grpcCallsCounter(registry: Registry): Counter<"method" | "code"> {
  return new Counter({
    name: "svc_grpc_server_calls_total",
    help: "gRPC calls answered by this process, by method path and final status code",
    labelNames: ["method", "code"],
    registers: [registry],
  });
}

/**
 * A grpc-js server interceptor counting every call by method path and final status code
 * (`svc_grpc_server_calls_total{method, code}`) and timing it (`svc_grpc_server_call_duration_seconds{method}`,
 * from the call's arrival to its status). It must come first in the server's `interceptors` (the innermost: grpc-js
 * wraps each later one around it), so it sees the status actually sent — a follower guard's UNAVAILABLE, a
 * refusal by `@svc/auth`, or a status the audit interceptor replaced. A call the client abandons counts as
 * `CANCELLED`.
 */
export function grpcServerMetrics(registry: Registry): ServerInterceptor {
  const calls = grpcCallsCounter(registry);
  const duration = new Histogram({
    name: "svc_grpc_server_call_duration_seconds",
    help: "Time from a gRPC call's arrival to its status, by method path",
    labelNames: ["method"],
    buckets: [...GRPC_DURATION_BUCKETS],
    registers: [registry],
  });
  return (method, call) => {
    const t0 = performance.now();
    let counted = false;
    const count = (code: number) => {
      if (counted) return;
      counted = true;
      calls.inc({ method: method.path, code: statusName(code) });
      duration.observe({ method: method.path }, (performance.now() - t0) / 1000);
    };
    return new ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: () => count(status.CANCELLED) }),
      sendStatus: (statusObject, nextStatus) => {
        count(statusObject.code);
        nextStatus(statusObject);
      },
    });
  };
}

type UnaryHandler = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

/**
 * The cheap way to count (the KMS's): every call of a unary service by method path and the status it was answered
 * with (`svc_grpc_server_calls_total{method, code}`, as `grpcServerMetrics`), by wrapping each handler's callback;
 * wrapped outside `@svc/auth`'s handlers, so their refusals count too. Not a server interceptor, which costs far more
 * CPU per call (the figures: docs/kms.md, Metrics); so no duration histogram, and not counted: calls grpc-js answers
 * before any handler (a stream ended before its message, an undecodable request) and calls the client cancels.
 */
export function countUnaryCalls(
  registry: Registry,
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
): UntypedServiceImplementation {
  const calls = grpcCallsCounter(registry);
  const counted: UntypedServiceImplementation = {};
  for (const [name, spec] of Object.entries(definition)) {
    const handler = implementation[name] as UnaryHandler | undefined;
    if (!handler) continue;
    const method = spec.path;
    counted[name] = ((call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      handler(call, (error, value, trailer, flags) => {
        const code = error ? (typeof error.code === "number" ? error.code : status.UNKNOWN) : status.OK;
        calls.inc({ method, code: statusName(code) });
        callback(error, value, trailer, flags);
      });
    }) as UntypedHandleCall;
  }
  return counted;
}
