import { Counter, Gauge, type Registry } from "prom-client";
import type { Elector } from "./elector.ts";

/**
 * Prometheus metrics of one elector, on the caller's registry: `svc_election_is_leader` (0/1),
 * `svc_election_term`, `svc_election_leadership_changes_total{change}` (became_leader, lost, released),
 * `svc_election_leader_observed_total`, `svc_election_attempt_failures_total` and, of those,
 * `svc_election_renew_failures_total` (the ones reported while this replica led: a renewal that failed or timed
 * out, or the lock's change feed breaking meanwhile; enough of them in a row and the renew deadline ends the
 * leadership).
 */
export class ElectionMetrics {
  readonly attemptFailures: Counter;
  readonly renewFailures: Counter;

  constructor(registry: Registry, elector: Elector, component: string) {
    const labels = { component, backend: elector.backend || "none" };
    const labelNames = ["component", "backend"] as const;
    new Gauge({
      name: "svc_election_is_leader",
      help: "1 while this replica leads (or serves with no election), else 0",
      labelNames,
      registers: [registry],
      collect() {
        this.set(labels, elector.isServing() ? 1 : 0);
      },
    });
    new Gauge({
      name: "svc_election_term",
      help: "fencing term last seen (Lease leaseTransitions, row epoch)",
      labelNames,
      registers: [registry],
      collect() {
        this.set(labels, elector.snapshot().term ?? -1);
      },
    });
    const changes = new Counter({
      name: "svc_election_leadership_changes_total",
      help: "leadership changes of this replica",
      labelNames: [...labelNames, "change"],
      registers: [registry],
    });
    const observed = new Counter({
      name: "svc_election_leader_observed_total",
      help: "times another holder (or a free lock) was observed",
      labelNames,
      registers: [registry],
    });
    this.attemptFailures = new Counter({
      name: "svc_election_attempt_failures_total",
      help: "acquire or renew attempts that failed (timeout, transport, server error)",
      labelNames,
      registers: [registry],
    });
    this.attemptFailures.inc(labels, 0);
    this.renewFailures = new Counter({
      name: "svc_election_renew_failures_total",
      help: "failed attempts reported while this replica led (renewals that failed or timed out)",
      labelNames,
      registers: [registry],
    });
    this.renewFailures.inc(labels, 0);
    elector.subscribe((event) => {
      if (event.type === "became-leader") changes.inc({ ...labels, change: "became_leader" });
      else if (event.type === "lost-leadership")
        changes.inc({ ...labels, change: event.released ? "released" : "lost" });
      else observed.inc(labels);
    });
    this.countFailure = () => {
      this.attemptFailures.inc(labels);
      if (elector.isServing()) this.renewFailures.inc(labels);
    };
  }

  /** Counts one failed attempt (`createElector` wires it to the elector's `onAttemptError`). */
  readonly countFailure: () => void;
}
