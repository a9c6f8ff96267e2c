import type { MetricsSource } from "@svc/common";
import { type EndpointDiagnostics, healthRoutes } from "./health-routes.ts";
import type { HealthState } from "./health-state.ts";

/** The spec's example port of the health endpoints. */
export const DEFAULT_HEALTH_PORT = 8080;

export interface HealthServer {
  /** The bound port (the real one when 0 was asked for). */
  port: number;
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves `healthRoutes(state)` over HTTP on `port` (8080 by default; 0 for an ephemeral port in tests), with
 * `/metrics` from `metrics` when given.
 */
export function serveHealth(
  state: HealthState,
  options: { port?: number; hostname?: string; diagnostics?: EndpointDiagnostics; metrics?: MetricsSource } = {},
): HealthServer {
  const app = healthRoutes(state, options.diagnostics, options.metrics);
  const hostname = options.hostname ?? "0.0.0.0";
  const server = Bun.serve({
    port: options.port ?? DEFAULT_HEALTH_PORT,
    hostname,
    fetch: (request) => app.handle(request),
  });
  const port = server.port ?? 0;
  const host = hostname === "0.0.0.0" ? "127.0.0.1" : hostname;
  return {
    port,
    url: `http://${host}:${port}`,
    async stop() {
      await server.stop(true);
    },
  };
}
