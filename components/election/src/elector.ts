/**
 * One interface over the four `election.backend` values (spec: "States and transitions"). `leader` and `follower`
 * under an election; `active` where there is none (`""`), every replica serving.
 */
export type ElectionRole = "leader" | "follower" | "active";

export interface LeadershipSnapshot {
  /** This replica's identity (the Pod name; the Lease's holderIdentity when it leads). */
  identity: string;
  role: ElectionRole;
  /** The holder last seen; undefined before the first observation, or while the lock is free. */
  holder: string | undefined;
  /** The fencing number of the current leadership (Lease `leaseTransitions`, the row's `epoch`). */
  term: number | undefined;
  /** When `role` last changed. */
  since: Date;
  /** Set once the elector stopped (released, or leadership lost: the process is expected to exit). */
  stopped: boolean;
}

export type ElectionEvent =
  /** `signal` aborts the moment the leadership ends: leader-only work stops on it. */
  | { type: "became-leader"; term: number; signal: AbortSignal }
  /** `reason` says why: renew deadline passed, another holder seen, released on shutdown. */
  | { type: "lost-leadership"; term: number; reason: string; released: boolean }
  | { type: "new-leader-observed"; holder: string | undefined; term: number | undefined };

export type ElectionListener = (event: ElectionEvent) => void;

export interface Elector {
  readonly backend: string;
  readonly identity: string;
  /** Starts campaigning; resolves once the first attempt is done (the role is known). */
  start(): Promise<void>;
  /** Graceful shutdown: stops leader work, then releases the lock so a follower takes over at once. */
  stop(): Promise<void>;
  snapshot(): LeadershipSnapshot;
  /** Whether business calls may be served now: the leader within its renew deadline, or an `active` replica. */
  isServing(): boolean;
  /** The current term while leading, else undefined; hand it to every write leader work makes. */
  currentTerm(): number | undefined;
  subscribe(listener: ElectionListener): () => void;
}
