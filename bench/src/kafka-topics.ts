import { Admin, ListOffsetTimestamps } from "@platformatic/kafka";

/** The bench's own topics on the shared broker: created fresh per row, deleted at the end of the run. */
export class BenchTopics {
  private readonly admin: Admin;
  private readonly created = new Set<string>();

  constructor(brokers: string[]) {
    this.admin = new Admin({ clientId: "svc-bench", bootstrapBrokers: brokers, timeout: 30_000 });
  }

  async create(name: string, partitions = 6): Promise<string> {
    await this.admin.createTopics({ topics: [name], partitions, replicas: 1 });
    this.created.add(name);
    return name;
  }

  /** The sum over partitions of the latest offsets: how many records the topic holds (nothing is compacted). */
  async total(topic: string, partitions = 6): Promise<number> {
    const listed = await this.admin.listOffsets({
      topics: [
        {
          name: topic,
          partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({
            partitionIndex,
            timestamp: ListOffsetTimestamps.LATEST,
          })),
        },
      ],
    });
    let sum = 0n;
    for (const entry of listed) for (const partition of entry.partitions) sum += partition.offset;
    return Number(sum);
  }

  /** Deletes every topic this run created (best effort: a failure is reported, not thrown). */
  async cleanup(): Promise<string[]> {
    const failures: string[] = [];
    const names = [...this.created];
    if (names.length > 0) {
      try {
        await this.admin.deleteTopics({ topics: names });
        this.created.clear();
      } catch (error) {
        failures.push(`delete topics ${names.join(", ")}: ${(error as Error).message}`);
      }
    }
    await this.admin.close().catch(() => undefined);
    return failures;
  }
}
