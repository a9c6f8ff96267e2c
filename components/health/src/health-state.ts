/**
 * The HA role of one replica (spec: "States and transitions"): `leader` and `follower` under an election;
 * `active` where there is none (`endpoint`, or `compute` with `election.backend: ""`), every replica serving.
 */
export type HealthRole = "leader" | "follower" | "active";

export interface HealthSnapshot {
  component: string;
  pod: string;
  role: HealthRole;
  /** Leader-only (or start-up) initialization done; a follower is pod-ready once it is. */
  initialized: boolean;
  /** When the role last changed (RFC 3339). */
  since: string;
}

export class HealthState {
  private role: HealthRole;
  private initialized = false;
  private since: Date;

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

  markInitialized(): void {
    this.initialized = true;
  }

  /** `/health/ready`: the gate of business traffic; only a leader, or an initialized active replica, serves. */
  isReady(): boolean {
    return this.role === "leader" || (this.role === "active" && this.initialized);
  }

  /** `/health/pod-ready`: the HA readiness probe; a follower counts once it is initialized. */
  isPodReady(): boolean {
    return this.role === "leader" || this.initialized;
  }

  snapshot(): HealthSnapshot {
    return {
      component: this.component,
      pod: this.pod,
      role: this.role,
      initialized: this.initialized,
      since: this.since.toISOString(),
    };
  }
}
