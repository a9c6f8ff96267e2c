import { type ComponentProfile, SLOW_LEASE } from "@svc/election";

/** `shaper`: keys and jobs of loaded indexes; HA is opt-in (default `election.backend: ""`). */
export const SHAPER: ComponentProfile = {
  name: "shaper",
  election: {
    backends: ["k8s-lease", ""],
    defaultBackend: "",
    lease: SLOW_LEASE,
    leaderLabel: "svc.ai/shaper-leader",
  },
  leaderDuties: [
    "keys of loaded indexes reloaded into it by the backend leader after reconnect",
    "lost in-flight jobs replayed by the backend leader from its task_queue",
  ],
};

/** `shaper.terminationGracePeriodSeconds` default; the leader releases its Lease in `preStop`. */
export const SHAPER_TERMINATION_GRACE_SECONDS = 120;
