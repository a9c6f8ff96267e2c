/** What one acquire-or-renew attempt found. */
export interface LeaseAttempt {
  /** This process holds the lock now (acquired or renewed by this very attempt). */
  leader: boolean;
  holder: string | undefined;
  term: number | undefined;
  /**
   * For a follower: milliseconds until the current holder's lease counts as expired, by the lock's own rule
   * (this process's monotonic clock for a Lease, the database clock for a row). The loop tries again then
   * rather than at its next jittered retry.
   */
  expiresInMs?: number;
}

/**
 * The backend-specific part of an election: one acquire-or-renew attempt and the release. The loop
 * (`LeaseElector`) owns the timing: retries, the renew deadline, events.
 */
export interface LeaseLock {
  /** Names the lock in logs and errors (`lease default/orchestrator-leader`). */
  readonly description: string;
  /** Prepares the lock (the postgres table); called once before the first attempt. */
  prepare?(timeoutMs: number): Promise<void>;
  /**
   * One attempt. `leading`: this process believes it holds the lock (a renewal). A new leadership (`leading`
   * false) always gets a new term, even when the record already names this identity (a restarted process).
   * Rejects on a transport failure or timeout; a conflict (another writer won) resolves `leader: false`.
   */
  tryAcquireOrRenew(leading: boolean, timeoutMs: number): Promise<LeaseAttempt>;
  /** Gives the lock up if this process still holds it, so a follower may take it at once. */
  release(timeoutMs: number): Promise<void>;
  /**
   * Optional change feed (the Lease's watch): calls `changed(holder)` whenever the record is seen to change
   * (`undefined` once released or deleted) until `signal` aborts or the feed ends. Resolves when the server
   * ended it normally, rejects when it broke; the loop then polls as usual and opens it again. Only a hint to try
   * at once: every decision is still made by `tryAcquireOrRenew`.
   */
  watch?(changed: (holder: string | undefined) => void, signal: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}
