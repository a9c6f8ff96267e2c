/** Offsets of one partition that the writer never received: gone from Kafka before it read them. */
export interface OffsetGap {
  partition: number;
  /** The first offset missing. */
  from: bigint;
  /** The first offset after the missing ones (everything in `[from, to)` is missing). */
  to: bigint;
}

/** Where a partition stands in Kafka now: the group's committed offset (-1: none) and the log's first offset. */
export interface PartitionPosition {
  committed: bigint;
  logStart: bigint;
}

/**
 * Notices offsets that were deleted from Kafka (time or size retention) before this writer read them. The client
 * jumps to the partition's log start when the committed or next offset is no longer there ("fallbackMode:
 * earliest"), silently: for an audit log that is lost data, so every jump is reported. The audit topic's producer
 * (the agent) is idempotent and not transactional, so a partition's offsets are contiguous.
 *
 * - Within a session, a record after the one expected is a jump.
 * - The first record of a newly assigned partition is compared with where the group stands then (`position`,
 *   read after that record arrived): a gap only when the group's committed offset is below the record AND the log
 *   now starts past it. Another replica may commit the partition late (its write finished after the partition
 *   moved), which moves the committed offset forward without any loss: the log start tells the two apart.
 */
export class OffsetGapWatch {
  private readonly next = new Map<number, bigint>();
  private readonly awaitingFirst = new Set<number>();
  private generation = 0;

  constructor(
    private readonly position: (partition: number) => Promise<PartitionPosition>,
    private readonly onGap: (gap: OffsetGap) => void,
    private readonly onCheckFailed: (error: unknown) => void = () => {},
  ) {}

  /** A session was assigned `partitions`: each one's first record is checked against the group's position. */
  assigned(partitions: Iterable<number>): void {
    this.generation += 1;
    this.next.clear();
    this.awaitingFirst.clear();
    for (const partition of partitions) this.awaitingFirst.add(partition);
  }

  /**
   * A record of `partition` at `offset` was received. For a partition's first record since its assignment, answers
   * the check against the group's position (it never rejects; the writer does not wait for it).
   */
  received(partition: number, offset: bigint): Promise<void> | undefined {
    let check: Promise<void> | undefined;
    if (this.awaitingFirst.delete(partition)) {
      check = this.checkStart(partition, offset, this.generation);
    } else {
      const expected = this.next.get(partition);
      if (expected !== undefined && offset > expected) this.onGap({ partition, from: expected, to: offset });
    }
    this.next.set(partition, offset + 1n);
    return check;
  }

  private async checkStart(partition: number, first: bigint, generation: number): Promise<void> {
    let where: PartitionPosition;
    try {
      where = await this.position(partition);
    } catch (error) {
      this.onCheckFailed(error);
      return;
    }
    if (generation !== this.generation) return;
    const { committed, logStart } = where;
    if (committed < 0n || committed >= first || logStart <= committed) return;
    this.onGap({ partition, from: committed, to: first < logStart ? first : logStart });
  }
}
