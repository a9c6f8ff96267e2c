import { type ComponentProfile, FAST_LEASE, leaderLabelOf, SLOW_LEASE } from "../index.ts";

/**
 * The HA components as the demo replica plays them: the spec's backends, default backend and timings (Limits).
 * The real profiles live in each component (`components/<name>/src/profile.ts`, checked against the spec by
 * testkit); they cannot be imported here, since those packages depend on this one. The demo also accepts
 * `postgres` for every component, so the failover tests can drive that backend with the same processes.
 */
const profile = (name: string, defaultBackend: "k8s-lease" | "", slow: boolean): ComponentProfile => ({
  name,
  election: {
    backends: ["k8s-lease", "postgres", "single-node", ""],
    defaultBackend,
    lease: slow ? SLOW_LEASE : FAST_LEASE,
    leaderLabel: leaderLabelOf(name),
  },
  leaderDuties: [],
});

export const DEMO_PROFILES: Readonly<Record<string, ComponentProfile>> = {
  orchestrator: profile("orchestrator", "k8s-lease", false),
  backend: profile("backend", "k8s-lease", true),
  compute: profile("compute", "k8s-lease", false),
  shaper: profile("shaper", "", true),
};
