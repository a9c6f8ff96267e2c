import { status } from "@grpc/grpc-js";
import { HealthCheckResponse_ServingStatus, type HealthServer } from "@svc/proto";
import type { HealthState } from "./health-state.ts";

/**
 * `grpc.health.v1.Health` over the replica's health state (the same as HTTP `/health/ready`): `SERVING` once
 * initialized and while the role admits traffic, else `NOT_SERVING`. It answers for the server as a whole (`""`)
 * and for each of `services` (full gRPC service names); another name is `NOT_FOUND`. No auth, as load balancers and
 * `grpc_health_probe` call it. `watch` sends the status now and on every change (checked every `pollMs`).
 */
export function grpcHealth(health: HealthState, services: readonly string[], pollMs = 1_000): HealthServer {
  const names = ["", ...services];
  const current = () =>
    health.isReady() ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
  const known = (name: string) => names.includes(name);
  return {
    check: (call, callback) => {
      if (!known(call.request.service)) {
        callback({ code: status.NOT_FOUND, details: `unknown service ${JSON.stringify(call.request.service)}` });
        return;
      }
      callback(null, { status: current() });
    },
    list: (_call, callback) => {
      const statuses = Object.fromEntries(names.map((name) => [name, { status: current() }]));
      callback(null, { statuses });
    },
    watch: (call) => {
      const serviceKnown = known(call.request.service);
      let last: HealthCheckResponse_ServingStatus | undefined;
      const send = () => {
        const now = serviceKnown ? current() : HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
        if (now !== last) call.write({ status: now });
        last = now;
      };
      send();
      const timer = setInterval(send, pollMs);
      call.on("cancelled", () => clearInterval(timer));
      call.on("close", () => clearInterval(timer));
    },
  };
}
