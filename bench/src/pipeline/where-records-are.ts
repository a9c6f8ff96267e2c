import type { BenchTopics } from "../kafka-topics.ts";
import type { IndexReader } from "./index-reader.ts";

export interface PartitionPosition {
  partition: number;
  /** The partition's end offset: what the producer put in Kafka. */
  end: number;
  /** The group's committed offset (-1 where none). */
  committed: number;
  /** The last offset in a durable object (-1 where none). */
  writtenThrough: number;
}

export interface RecordsWhereabouts {
  /** Records in Kafka: the sum of the end offsets. */
  inKafka: number;
  partitions: PartitionPosition[];
}

/**
 * For a run that stopped short: the records in Kafka and, per partition, its end offset, the group's commit and the
 * last offset in a durable object — which of producer, fetch or write holds the missing records.
 */
export async function whereTheRecordsAre(
  topics: BenchTopics,
  topic: string,
  groupId: string,
  index: IndexReader,
): Promise<RecordsWhereabouts> {
  const [ends, committed, written] = await Promise.all([
    topics.endOffsets(topic),
    topics.committedOffsets(groupId, topic),
    index.writtenThrough(),
  ]);
  return {
    inKafka: ends.reduce((sum, end) => sum + end, 0),
    partitions: ends.map((end, partition) => ({
      partition,
      end,
      committed: committed[partition] ?? -1,
      writtenThrough: written.get(partition) ?? -1,
    })),
  };
}

/** One line per partition, for an error message. */
export function describeWhereabouts(where: RecordsWhereabouts): string {
  const lines = where.partitions.map(
    (p) => `  partition ${p.partition}: end ${p.end}, committed ${p.committed}, written through ${p.writtenThrough}`,
  );
  return [`in Kafka: ${where.inKafka}`, ...lines].join("\n");
}
