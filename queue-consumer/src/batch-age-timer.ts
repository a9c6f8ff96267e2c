/** What the age timer needs of a partition's writer. */
export interface AgedBatches {
  /** When the open batch is due for `maxAgeMs` (`performance.now()` time); undefined when none is open. */
  dueAt(maxAgeMs: number): number | undefined;
  seal(): void;
}

/**
 * Seals each partition's open batch when it is due (the end of its window, `batchWindowEnd`), on time: one
 * timeout, set for the earliest batch due and set again after it fires. The fixed tick it replaces (a quarter of
 * the age, at most 1 s) sealed a batch up to one tick late: at the 9 s default objects spanned 9–10 s, so objects
 * per hour fell short of the age's and the latency's tail grew by up to the tick (docs/audit-storage.md, "Object
 * economy").
 */
export class BatchAgeTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (`performance.now()` time); infinite when it is not set. */
  private at = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    readonly maxAgeMs: number,
    private readonly writers: () => Iterable<AgedBatches>,
  ) {}

  /** A batch was opened that is due at `at` (its writer's `dueAt`). */
  due(at: number): void {
    this.schedule(at);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
  }

  private schedule(at: number): void {
    if (this.stopped || at >= this.at) return;
    clearTimeout(this.timer);
    this.at = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const writer of this.writers()) {
      if ((writer.dueAt(this.maxAgeMs) ?? Number.POSITIVE_INFINITY) <= now) writer.seal();
      const due = writer.dueAt(this.maxAgeMs);
      // A batch still due after its seal (a writer that cannot seal) is not waited for again at once.
      if (due !== undefined && due > now && due < next) next = due;
    }
    if (next < Number.POSITIVE_INFINITY) this.schedule(next);
  }
}
