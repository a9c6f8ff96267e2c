/**
 * The end-to-end row's sustained rate: events per second while the pipeline runs full, without its start (the
 * services' imports, the group's assignment, the first batch's age) and its tail (the last batches' age). The
 * spawn-to-last figure carries both; a longer file would amortise them, this measures without them.
 */

/** One durable object: when S3 acknowledged it (epoch ms, `objects.written_at`) and the records it holds. */
export interface DurableObject {
  atMs: number;
  records: number;
}

export interface SustainedRate {
  /** Records made durable after the window opened, up to and with the object that closed it. */
  records: number;
  /** From the moment `from` of the run's records were durable to the moment `to` of them were. */
  ms: number;
  perSecond: number;
}

/**
 * The rate between the moment the first `from` share of `total` records was durable and the moment the first `to`
 * share was: the records of the objects written after the first moment up to the second, over the time between.
 * Objects acknowledged in the same millisecond count as one step. Undefined when the window holds no time (too few
 * objects, or fewer records than `to` of `total`).
 */
export function sustainedRate(
  objects: readonly DurableObject[],
  total: number,
  from = 0.1,
  to = 0.9,
): SustainedRate | undefined {
  if (!(from >= 0 && from < to && to <= 1)) throw new RangeError(`sustained window ${from}–${to} is not within [0, 1]`);
  const steps = new Map<number, number>();
  for (const object of objects) steps.set(object.atMs, (steps.get(object.atMs) ?? 0) + object.records);
  let durable = 0;
  let opened: { atMs: number; durable: number } | undefined;
  for (const atMs of [...steps.keys()].sort((a, b) => a - b)) {
    durable += steps.get(atMs) ?? 0;
    if (opened === undefined && durable >= from * total) opened = { atMs, durable };
    if (opened !== undefined && durable >= to * total) {
      const ms = atMs - opened.atMs;
      const records = durable - opened.durable;
      return ms > 0 && records > 0 ? { records, ms, perSecond: (records * 1000) / ms } : undefined;
    }
  }
  return undefined;
}
