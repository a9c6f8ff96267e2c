import { type ComponentProfile, FAST_LEASE } from "@svc/election";

/** `orchestrator`: supervises compute nodes and reconciles state; leader-only in HA mode. */
export const ORCHESTRATOR: ComponentProfile = {
  name: "orchestrator",
  election: {
    backends: ["k8s-lease", "postgres"],
    defaultBackend: "k8s-lease",
    lease: FAST_LEASE,
    leaderLabel: "svc.ai/orchestrator-leader",
  },
  leaderDuties: ["recoverState()", "node supervision", "reconciliation"],
  pdbMinAvailable: 1,
};
