import { status } from "@grpc/grpc-js";
import { grpcRefusal } from "@svc/component-runtime";
import { dutyCounter, dutyGauge } from "@svc/component-runtime/metrics";
import { withRequestTimeout } from "@svc/election";
import type { ReplicaAddress } from "./config.ts";
import type { Discover } from "./discovery.ts";

/** What endpoint last observed of a component (`/health/deps`). */
export interface ObservedComponent {
  /** The serving replica's Pod (its `/health/whoami`), when one serves. */
  leader: string | undefined;
  term: number | undefined;
  role: string | undefined;
  /** The serving replica's gRPC address. */
  address: string | undefined;
  /** When a serving replica was last seen (RFC 3339), if ever. */
  lastSeen: string | undefined;
  candidates: number;
  error: string | undefined;
}

const routeChanges = dutyCounter(
  "svc_endpoint_route_changes_total",
  "Times a probe found a component served by another leader (pod or term) than the one last seen serving",
  ["component"],
);
const routeServing = dutyGauge(
  "svc_endpoint_route_serving",
  "1 while endpoint knows a serving replica of the component (its last probe found one, no call failed since), else 0",
  ["component"],
);

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The gRPC error a call gets while the component has no serving replica (spec: Errors). */
export const noLeader = (component: string) =>
  grpcRefusal(status.UNAVAILABLE, `no ${component} leader is serving (failover in progress); retry`);

/**
 * How endpoint reaches the current leader of one component, as a Service with a readiness probe does: it probes
 * each discovered replica's `/health/ready` every `probeMs` and routes only to one answering 200 (a leader, or an
 * active replica), never to a follower. A call that ends UNAVAILABLE drops the target until the next probe, which
 * is run at once. While none serves, calls end UNAVAILABLE at once. Discovery is bounded too (`discoveryTimeoutMs`):
 * a probe waits for it, and the next probe for that one, so a Pod list that never answered would freeze the route
 * on what it last saw (after a failover: no serving replica, every call UNAVAILABLE, for good).
 */
export class ComponentRoute {
  private serving: ReplicaAddress | undefined;
  private observed: ObservedComponent = {
    leader: undefined,
    term: undefined,
    role: undefined,
    address: undefined,
    lastSeen: undefined,
    candidates: 0,
    error: undefined,
  };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private probing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    readonly component: string,
    private readonly discover: Discover,
    private readonly probeMs: number,
    private readonly discoveryTimeoutMs = Math.max(2_000, probeMs * 4),
  ) {
    routeServing.set({ component }, 0);
  }

  /** Probes once now, then every `probeMs`. */
  async start(): Promise<void> {
    await this.probeNow();
    this.schedule();
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.probeNow().finally(() => this.schedule());
    }, this.probeMs);
  }

  probeNow(): Promise<void> {
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  private async probe(): Promise<void> {
    let candidates: ReplicaAddress[];
    try {
      candidates = await withRequestTimeout(`${this.component} discovery`, this.discoveryTimeoutMs, () =>
        this.discover(),
      );
    } catch (error) {
      this.routeTo(undefined);
      this.observed = { ...this.observed, address: undefined, error: `discovery: ${messageOf(error)}` };
      return;
    }
    const timeoutMs = Math.min(1_000, Math.max(100, this.probeMs * 2));
    const answers = await Promise.all(
      candidates.map(async (candidate) => {
        try {
          const ready = await fetch(`http://${candidate.health}/health/ready`, {
            signal: AbortSignal.timeout(timeoutMs),
          });
          await ready.body?.cancel();
          if (ready.status !== 200) return undefined;
          const whoami = await fetch(`http://${candidate.health}/health/whoami`, {
            signal: AbortSignal.timeout(timeoutMs),
          });
          return { candidate, whoami: (await whoami.json()) as Record<string, unknown> };
        } catch {
          return undefined;
        }
      }),
    );
    const ready = answers.filter((a) => a !== undefined);
    const chosen = ready.find((a) => a.candidate.grpc === this.serving?.grpc) ?? ready[0];
    this.routeTo(chosen?.candidate);
    const leader = chosen ? String(chosen.whoami.pod ?? "") : this.observed.leader;
    const term = chosen ? (chosen.whoami.term as number | undefined) : this.observed.term;
    if (
      chosen &&
      this.observed.lastSeen !== undefined &&
      (leader !== this.observed.leader || term !== this.observed.term)
    ) {
      routeChanges.inc({ component: this.component });
    }
    this.observed = {
      leader,
      term,
      role: chosen ? String(chosen.whoami.role ?? "") : undefined,
      address: chosen?.candidate.grpc,
      lastSeen: chosen ? new Date().toISOString() : this.observed.lastSeen,
      candidates: candidates.length,
      error: chosen ? undefined : `none of ${candidates.length} replicas is ready`,
    };
  }

  private routeTo(target: ReplicaAddress | undefined): void {
    this.serving = target;
    routeServing.set({ component: this.component }, target ? 1 : 0);
  }

  /** The replica to call now, if one serves. */
  current(): ReplicaAddress | undefined {
    return this.serving;
  }

  /** A call to `grpcAddress` ended UNAVAILABLE: stop using it until a probe says otherwise. */
  markFailed(grpcAddress: string): void {
    if (this.serving?.grpc === grpcAddress) this.routeTo(undefined);
    void this.probeNow();
  }

  snapshot(): ObservedComponent {
    return { ...this.observed };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.probing;
  }
}
