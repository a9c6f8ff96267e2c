import type { ElectionListener, ElectionRole, Elector, LeadershipSnapshot } from "./elector.ts";

/**
 * The two backends without a lock. `single-node` (backend outside a cluster): this replica is always the leader,
 * term 1. `""` (compute, shaper without HA): no election; every replica is `active` and serves.
 */
export class StaticElector implements Elector {
  private readonly listeners = new Set<ElectionListener>();
  private readonly since = new Date();
  private readonly controller = new AbortController();
  private running = false;
  private stopped = false;

  constructor(
    readonly backend: "single-node" | "",
    readonly identity: string,
  ) {}

  private get role(): ElectionRole {
    return this.backend === "single-node" ? "leader" : "active";
  }

  async start(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    if (this.backend === "single-node") {
      for (const listener of this.listeners)
        listener({ type: "became-leader", term: 1, signal: this.controller.signal });
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.running = false;
    if (this.backend !== "single-node") return;
    this.controller.abort(new Error("released on shutdown"));
    for (const listener of this.listeners) {
      listener({ type: "lost-leadership", term: 1, reason: "released on shutdown", released: true });
    }
  }

  snapshot(): LeadershipSnapshot {
    const leader = this.backend === "single-node";
    return {
      identity: this.identity,
      role: this.role,
      holder: leader ? this.identity : undefined,
      term: leader ? 1 : undefined,
      since: this.since,
      stopped: this.stopped,
    };
  }

  isServing(): boolean {
    return this.running;
  }

  currentTerm(): number | undefined {
    return this.running && this.backend === "single-node" ? 1 : undefined;
  }

  subscribe(listener: ElectionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
