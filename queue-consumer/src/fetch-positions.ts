/**
 * Drops the fetch positions the Kafka client would wrongly keep across a rebalance. `@platformatic/kafka` 2.12.1's
 * stream keeps its position for every partition it ever fetched (`offsetsToFetch`, keys `topic:partition`); on a
 * new assignment it overwrites a position only with a committed offset and adds the fallback (earliest) only where
 * it has none. A partition this replica read, lost before its first commit, and got back still uncommitted was
 * then fetched from where this replica had stopped, not from the start: the records between were never written,
 * and the next commit passed them (`bench/src/pipeline/churn.ts` found it: partition 4 written from offset 34 on,
 * offsets 0–33 of a fresh topic lost).
 *
 * Kept: positions of partitions held before and after (their writer holds what was read). Dropped: those not
 * assigned now, and those newly assigned (a position from an earlier assignment is stale).
 */
export function dropStalePositions(
  positions: Map<string, bigint>,
  topic: string,
  before: ReadonlySet<number>,
  after: ReadonlySet<number>,
): number[] {
  const dropped: number[] = [];
  const prefix = `${topic}:`;
  // Deleting the entry being visited is safe in a Map's iteration.
  for (const key of positions.keys()) {
    if (!key.startsWith(prefix)) continue;
    const partition = Number(key.slice(prefix.length));
    if (after.has(partition) && before.has(partition)) continue;
    positions.delete(key);
    dropped.push(partition);
  }
  return dropped.sort((a, b) => a - b);
}
