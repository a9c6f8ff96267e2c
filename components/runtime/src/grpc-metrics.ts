import { ServerInterceptingCall, type ServerInterceptor, status } from "@grpc/grpc-js";
import { Counter, Histogram, type Registry } from "prom-client";

/** Bounds of the call duration histogram, in seconds: sub-millisecond answers up to a backend job's 30 s. */
const GRPC_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** `OK`, `UNAVAILABLE`, … for a status code (the number itself for one grpc-js does not name). */
export const statusName = (code: number): string => status[code] ?? String(code);

/**
 * A grpc-js server interceptor counting every call by method path and final status code
 * (`svc_grpc_server_calls_total{method, code}`) and timing it (`svc_grpc_server_call_duration_seconds{method}`,
 * from the call's arrival to its status). It must come first in the server's `interceptors` (the innermost: grpc-js
 * wraps each later one around it), so it sees the status actually sent — a follower guard's UNAVAILABLE, a
 * refusal by `@svc/auth`, or a status the audit interceptor replaced. A call the client abandons counts as
 * `CANCELLED`.
 */
export function grpcServerMetrics(registry: Registry): ServerInterceptor {
  const calls = new Counter({
    name: "svc_grpc_server_calls_total",
    help: "gRPC calls answered by this replica, by method path and final status code",
    labelNames: ["method", "code"],
    registers: [registry],
  });
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
