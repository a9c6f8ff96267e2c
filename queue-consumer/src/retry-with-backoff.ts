import { backoffMs } from "@svc/common";
import { QueueConsumerError } from "./errors.ts";

export interface RetryOptions {
  /** Longest wait between two attempts; waits double from 100 ms up to it (with jitter). */
  maxDelayMs: number;
  /** Aborting ends the loop with `QUEUE_CONSUMER_ABORTED` (shutdown, or a partition revoked). */
  signal: AbortSignal;
  /** Stop after this many attempts (undefined: until it succeeds or fails for good). */
  maxAttempts?: number;
  onRetry?: (error: QueueConsumerError, attempt: number, delayMs: number) => void;
}

/** `QUEUE_CONSUMER_ABORTED` for `what` (a write or step stopped by shutdown or a revoked partition). */
export function abortedError(what: string): QueueConsumerError {
  return new QueueConsumerError("QUEUE_CONSUMER_ABORTED", `${what}: stopped before it succeeded`, { subject: what });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs `operation` until it succeeds. Failures are `QueueConsumerError`s; one whose `canRetry` is false ends the
 * loop at once (rethrown), one that can be retried waits and tries again.
 */
export async function retryWithBackoff<T>(
  what: string,
  operation: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (options.signal.aborted) throw abortedError(what);
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof QueueConsumerError) || !error.canRetry) throw error;
      if (options.maxAttempts !== undefined && attempt >= options.maxAttempts) throw error;
      const wait = backoffMs(attempt - 1, options.maxDelayMs);
      options.onRetry?.(error, attempt, wait);
      await sleep(wait, options.signal);
    }
  }
}
