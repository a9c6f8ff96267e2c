/**
 * Exponential backoff with jitter for retry loops: attempt 0 waits 50–100 ms, attempt 1 100–200 ms, … each at
 * most `maxMs` (the upper half of the doubled delay, so retries of many clients spread out without ever waiting
 * less than half of it).
 */
export function backoffMs(attempt: number, maxMs = 5_000): number {
  const base = Math.min(maxMs, 100 * 2 ** Math.min(Math.max(attempt, 0), 16));
  return Math.round(base / 2 + Math.random() * (base / 2));
}
