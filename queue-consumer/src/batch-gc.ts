/** The shortest time between two full collections asked for after batches. */
export const FULL_GC_EVERY_MS = 250;

/**
 * Collects garbage after a batch is durable: a full collection at most once per `everyMs`, a young-generation one
 * otherwise. A batch's index rows (an object and three strings per event, ~12 MB for 40k events) live through its
 * COPY, long enough to reach the old generation, which JSC sweeps late: with only young collections the writer's
 * peak RSS at 50k events/s was 270–280 MiB, with a full one per batch 239–250 MiB, at most every 250 ms 253–267
 * (and every 1 s 261): ~45 ms of main-thread time per full collection of a 40k-record batch (2 µs per record),
 * within the noise of the writer's CPU per record (queue-consumer/README.md, "Memory"). The bound keeps many small
 * batches from collecting the whole heap each.
 */
export class BatchGc {
  private lastFull = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly collect: (full: boolean) => void = (full) => Bun.gc(full),
    private readonly now: () => number = () => performance.now(),
    private readonly everyMs = FULL_GC_EVERY_MS,
  ) {}

  /** After a batch: true when the collection was a full one. */
  afterBatch(): boolean {
    const at = this.now();
    const full = at - this.lastFull >= this.everyMs;
    if (full) this.lastFull = at;
    this.collect(full);
    return full;
  }
}
