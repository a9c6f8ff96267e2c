/** Latency maths of the bench: exact percentiles over a histogram of whole milliseconds. */

/** value (ms) → how many records had it. */
export type Histogram = Map<number, number>;

export function histogramOf(values: Iterable<number>): Histogram {
  const histogram: Histogram = new Map();
  for (const value of values) histogram.set(value, (histogram.get(value) ?? 0) + 1);
  return histogram;
}

/**
 * The nearest-rank percentile (`p` in [0, 100]): the smallest value such that at least p % of the samples are ≤ it.
 * Undefined for an empty histogram.
 */
export function percentile(histogram: Histogram, p: number): number | undefined {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile ${p} is not in [0, 100]`);
  const values = [...histogram.keys()].sort((a, b) => a - b);
  let total = 0;
  for (const value of values) total += histogram.get(value) ?? 0;
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const value of values) {
    seen += histogram.get(value) ?? 0;
    if (seen >= rank) return value;
  }
  return values[values.length - 1];
}

export function countOf(histogram: Histogram): number {
  let total = 0;
  for (const n of histogram.values()) total += n;
  return total;
}

/**
 * Objects per partition per hour, extrapolated from the objects one partition wrote, each at the time of its newest
 * record (`IndexReader.objectCuts`): (objects − 1) over the span between its first and last object — the steady
 * cadence. With four objects or more the first and the last are left out: they hold the run's partial first and
 * last windows (the last one ends at the last line written, not at a cut). Undefined with fewer than two objects or
 * a zero span. Read from each object's PUT acknowledgement instead, the same objects gave estimates spread by the
 * PUTs' jitter: five runs at 10k events/s, windows of 10.01 and 10.02 s (359.64 and 359.28 by construction), the
 * busiest partition's estimate was 359.02–359.81 and 358.39–359.37 from the acknowledgements, 359.59–359.73 and
 * 359.23–359.64 from the newest records (bench/README.md, "Objects per hour").
 */
export function objectsPerHour(cutsMs: readonly number[]): number | undefined {
  if (cutsMs.length < 2) return undefined;
  const all = [...cutsMs].sort((a, b) => a - b);
  const sorted = all.length >= 4 ? all.slice(1, -1) : all;
  const span = (sorted[sorted.length - 1] ?? 0) - (sorted[0] ?? 0);
  if (span <= 0) return undefined;
  return ((sorted.length - 1) * 3_600_000) / span;
}

/** Records (or bytes) per second over `ms` milliseconds. */
export function ratePerSecond(amount: number, ms: number): number {
  return ms > 0 ? (amount * 1000) / ms : 0;
}
