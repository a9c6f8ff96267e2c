import { type ComponentProfile, FAST_LEASE, SLOW_LEASE } from "@svc/election";

// The runtime does not depend on the components; these mirror their profiles' election rules (spec: Limits).
export const ORCHESTRATOR_PROFILE_FOR_TEST: ComponentProfile = {
  name: "orchestrator",
  election: {
    backends: ["k8s-lease", "postgres"],
    defaultBackend: "k8s-lease",
    lease: FAST_LEASE,
    leaderLabel: "svc.ai/orchestrator-leader",
  },
  leaderDuties: [],
};

export const COMPUTE_PROFILE_FOR_TEST: ComponentProfile = {
  name: "compute",
  election: { backends: ["k8s-lease", ""], defaultBackend: "k8s-lease", lease: FAST_LEASE, leaderLabel: "x" },
  leaderDuties: [],
};

export const BACKEND_PROFILE_FOR_TEST: ComponentProfile = {
  name: "backend",
  election: {
    backends: ["k8s-lease", "single-node"],
    defaultBackend: "k8s-lease",
    lease: SLOW_LEASE,
    leaderLabel: "x",
  },
  leaderDuties: [],
};
