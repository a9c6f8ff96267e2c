import { ElectionError } from "./errors.ts";
import type { LeaseTimings } from "./lease-timings.ts";

/** `election.backend` values (spec: Limits); `""` runs every replica active (no HA). */
export type ElectionBackend = "k8s-lease" | "postgres" | "single-node" | "";

/** What the HA model says about one component (spec: States and transitions, Limits). */
export interface ComponentProfile {
  name: string;
  /** Absent for `endpoint` and the KMS, which have no election. */
  election?: {
    backends: readonly ElectionBackend[];
    defaultBackend: ElectionBackend;
    lease: LeaseTimings;
    /** Pod label set to `true` on the leader; Services route only to the labelled pod. */
    leaderLabel: string;
  };
  /** Work only the leader runs (spec: Leader-only duties). */
  leaderDuties: readonly string[];
  /** PodDisruptionBudget `minAvailable`, when the component has one. */
  pdbMinAvailable?: number;
  /** Default gRPC port, where the spec names one. */
  grpcPort?: number;
}

/** Parses `<component>.election.backend`, refusing a value the component does not support. */
export function parseElectionBackend(profile: ComponentProfile, value: string | undefined): ElectionBackend {
  const field = `${profile.name}.election.backend`;
  if (!profile.election) {
    if (value === undefined || value === "") return "";
    throw new ElectionError("ELECTION_BACKEND_UNSUPPORTED", field, `${profile.name} has no election`);
  }
  if (value === undefined) return profile.election.defaultBackend;
  const backend = profile.election.backends.find((b) => b === value);
  if (backend === undefined) {
    const allowed = profile.election.backends.map((b) => JSON.stringify(b)).join(", ");
    throw new ElectionError("ELECTION_BACKEND_UNSUPPORTED", field, `${JSON.stringify(value)} is not one of ${allowed}`);
  }
  return backend;
}
