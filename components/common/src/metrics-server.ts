/** What `/metrics` serves: a prom-client `Registry` fits. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** What `/health` answers: 200 with `body` when healthy, 503 with it otherwise. */
export interface HealthReport {
  healthy: boolean;
  body: Record<string, unknown>;
}

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port; `url` tells which. */
  port: number;
  registry: MetricsSource;
  health: () => HealthReport;
  /** The error to throw when the address cannot be bound (each package has its own code for it). */
  listenError: (address: string, cause: unknown) => Error;
}

export interface MetricsServer {
  /** `http://host:port` as bound. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Serves `/metrics` (Prometheus text) and `/health` for a service of the pipeline; anything else is 404. */
export function serveMetrics(options: MetricsServerOptions): MetricsServer {
  const { host, port, registry, health } = options;
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
    throw options.listenError(`${host}:${port}`, cause);
  }
  return { url: `http://${host}:${server.port}`, stop: () => server.stop(true) };
}
