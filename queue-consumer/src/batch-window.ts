/** The golden ratio's fraction: partition × φ mod 1 spreads any number of partitions evenly over a window. */
const SPREAD = (Math.sqrt(5) - 1) / 2;

/**
 * When a partition's batch opened at `openedAt` is due: the end of the window it opened in, on a fixed grid of
 * `maxAgeMs` windows, shifted per partition (docs/audit-storage.md, "Object economy").
 *
 * - A fixed grid makes a busy partition's cadence exactly `maxAgeMs`: at most one batch closed by age per window,
 *   so 10 s windows give at most 360 objects per partition per hour. Counting the age from each batch's first
 *   record instead made every cadence `maxAgeMs` plus the wait for that first record and the timer's lateness
 *   (10.14 s at 10 s: fewer objects, but each one's oldest record waited longer).
 * - No record waits longer than `maxAgeMs`: a batch opened late in its window is closed early (smaller).
 * - The shift (partition × φ, modulo the window) keeps a consumer's partitions from closing at the same moment:
 *   four 10 MB batches PUT and indexed together made the last of them wait for the others (0.8–1.5 s late).
 *
 * `openedAt` and the result are on the caller's monotonic clock (`performance.now()`).
 */
export function batchWindowEnd(openedAt: number, maxAgeMs: number, partition: number): number {
  const shift = ((partition * SPREAD) % 1) * maxAgeMs;
  return shift + (Math.floor((openedAt - shift) / maxAgeMs) + 1) * maxAgeMs;
}
