/**
 * The HA role of one replica (spec: "States and transitions"): `leader` and `follower` under an election;
 * `active` where there is none (`endpoint`, or `compute` with `election.backend: ""`), every replica serving.
 */
export type HealthRole = "leader" | "follower" | "active";

export interface HealthSnapshot {
  component: string;
  pod: string;
  role: HealthRole;
  /** The current leader as last observed (undefined with no election or before the first observation). */
  holder: string | undefined;
  /** The leadership's fencing term (Lease transitions, row epoch), when known. */
  term: number | undefined;
  /** Leader-only (or start-up) initialization done; a follower is pod-ready once it is. */
  initialized: boolean;
  /** When the role last changed (RFC 3339). */
  since: string;
}

/** Where the role comes from when it is live (an elector): read at every request, so it overrides any `setRole`. */
export interface RoleSource {
  role(): HealthRole;
  holder(): string | undefined;
  term(): number | undefined;
}

export class HealthState {
  private role: HealthRole;
  private initialized = false;
  private since: Date;
  private holder: string | undefined;
  private term: number | undefined;
  private source: RoleSource | undefined;

  constructor(
    readonly component: string,
    readonly pod: string,
    initialRole: HealthRole,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.role = initialRole;
    this.since = now();
  }

  setRole(role: HealthRole): void {
    if (role === this.role) return;
    this.role = role;
    this.since = this.now();
  }

  /** Records the leadership last observed, for `/health/whoami`. */
  setLeadership(holder: string | undefined, term: number | undefined): void {
    this.holder = holder;
    this.term = term;
  }

  /**
   * Reads role, holder and term from `source` at every request, so `/health/ready` flips the moment the elector's
   * leadership ends (a renew deadline passing needs no event to reach the health state).
   */
  follow(source: RoleSource): void {
    this.source = source;
  }

  markInitialized(): void {
    this.initialized = true;
  }

  private current(): HealthRole {
    if (this.source) this.setRole(this.source.role());
    return this.role;
  }

  /** `/health/ready`: the gate of business traffic; only a leader, or an initialized active replica, serves. */
  isReady(): boolean {
    const role = this.current();
    return role === "leader" || (role === "active" && this.initialized);
  }

  /** `/health/pod-ready`: the HA readiness probe; a follower counts once it is initialized. */
  isPodReady(): boolean {
    return this.current() === "leader" || this.initialized;
  }

  snapshot(): HealthSnapshot {
    const role = this.current();
    return {
      component: this.component,
      pod: this.pod,
      role,
      holder: this.source ? this.source.holder() : this.holder,
      term: this.source ? this.source.term() : this.term,
      initialized: this.initialized,
      since: this.since.toISOString(),
    };
  }
}
