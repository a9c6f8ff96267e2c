import { type ComponentProfile, FAST_LEASE } from "@svc/election";

/**
 * `compute`: holds shards loaded from object storage and registers with `orchestrator` (`AddCompute`).
 * `election.backend: ""` disables HA and runs every replica active-active; the spec names no default, and the
 * HA deployment it describes sets `k8s-lease`, which is the default here.
 */
export const COMPUTE: ComponentProfile = {
  name: "compute",
  election: {
    backends: ["k8s-lease", ""],
    defaultBackend: "k8s-lease",
    lease: FAST_LEASE,
    leaderLabel: "svc.ai/compute-leader",
  },
  leaderDuties: ["AddCompute registration", "shards reassigned and reloaded from object storage after promotion"],
  pdbMinAvailable: 1,
};
