import { type ComponentProfile, SLOW_LEASE } from "@svc/election";

/** `backend`: task recovery, append queue, cleanup, index delete scheduling; leader-only in HA mode. */
export const BACKEND: ComponentProfile = {
  name: "backend",
  election: {
    backends: ["k8s-lease", "single-node"],
    defaultBackend: "k8s-lease",
    lease: SLOW_LEASE,
    leaderLabel: "svc.ai/backend-leader",
  },
  leaderDuties: [
    "RecoverTasks()",
    "RecoverVCTCaches()",
    "append queue worker",
    "cleanup worker",
    "index delete scheduling",
  ],
  pdbMinAvailable: 1,
};
