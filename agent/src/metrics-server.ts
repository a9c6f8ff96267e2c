import type { Registry } from "prom-client";
import { AgentError } from "./errors.ts";

export interface HealthReport {
  healthy: boolean;
  body: Record<string, unknown>;
}

/** Serves `/metrics` (Prometheus text) and `/health` (200 while shipping, 503 with the reason otherwise). */
export function serveMetrics(
  host: string,
  port: number,
  registry: Registry,
  health: () => HealthReport,
): { url: string; stop(): Promise<void> } {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: host,
      port,
      async fetch(request) {
        const { pathname } = new URL(request.url);
        if (pathname === "/metrics") {
          return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
        }
        if (pathname === "/health") {
          const report = health();
          return Response.json(report.body, { status: report.healthy ? 200 : 503 });
        }
        return new Response("not found\n", { status: 404 });
      },
    });
  } catch (cause) {
    throw new AgentError(
      "AGENT_METRICS_LISTEN_FAILED",
      `cannot listen on ${host}:${port}: ${(cause as Error).message}`,
      {
        subject: `${host}:${port}`,
        cause,
      },
    );
  }
  return { url: `http://${host}:${server.port}`, stop: () => server.stop(true) };
}
