/** Where `forward` sends records: one batch at a time, resolved only once the receiver acknowledged all of it. */
export interface SiemSink {
  /** Names the receiver in the checkpoint (a checkpoint of another receiver is not resumed). */
  readonly target: string;
  /** Resolves when the receiver acknowledged the batch; rejects with an `AuditCliError` (`canRetry` or not). */
  deliver(records: readonly Record<string, unknown>[]): Promise<void>;
}

/** How long one delivery may take before it counts as failed (and is retried). */
export const DELIVERY_TIMEOUT_MS = 30_000;
