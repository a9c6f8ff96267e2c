import type { MetricsSource } from "@svc/common";
import { Elysia } from "elysia";
import type { HealthState } from "./health-state.ts";

/** Diagnostics only `endpoint` serves (spec: `/health/deps`, `/health/ha`). */
export interface EndpointDiagnostics {
  /** Observed state of backend, orchestrator, compute, shaper. */
  deps: () => Promise<Record<string, unknown>>;
  /** HA diagnostics. */
  ha: () => Promise<Record<string, unknown>>;
}

const status = (ok: boolean) => (ok ? 200 : 503);

/**
 * The health endpoints of every HA-aware service (spec: "Health endpoints"): `/health` (liveness),
 * `/health/ready` (200 leader, 503 follower), `/health/pod-ready` (200 leader, 200 initialized follower),
 * `/health/whoami`; `/health/deps` and `/health/ha` when diagnostics are given (endpoint only); `/metrics` when a
 * metrics source is given (one port for the kubelet's probes and Prometheus' scrape).
 */
export function healthRoutes(state: HealthState, diagnostics?: EndpointDiagnostics, metrics?: MetricsSource) {
  const app = new Elysia({ name: "svc-health" })
    .get("/health", () => ({ status: "ok", component: state.component }))
    .get("/health/ready", ({ set }) => {
      const ready = state.isReady();
      set.status = status(ready);
      return { ready, role: state.snapshot().role };
    })
    .get("/health/pod-ready", ({ set }) => {
      const ready = state.isPodReady();
      set.status = status(ready);
      return { ready, role: state.snapshot().role, initialized: state.snapshot().initialized };
    })
    .get("/health/whoami", () => state.snapshot());
  // Only with a source: an app that serves no metrics (the KMS, the audit API) has no /metrics route to declare to
  // @svc/auth's route coverage check.
  if (metrics) {
    app.get(
      "/metrics",
      async () => new Response(await metrics.metrics(), { headers: { "content-type": metrics.contentType } }),
    );
  }
  if (!diagnostics) return app;
  return app.get("/health/deps", () => diagnostics.deps()).get("/health/ha", () => diagnostics.ha());
}
