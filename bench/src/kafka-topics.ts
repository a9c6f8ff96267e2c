import { Admin, ListOffsetTimestamps } from "@platformatic/kafka";
import { BenchError } from "./errors.ts";

/** Topic settings that override the broker's retention: no size or time limit. */
const KEEP_EVERY_RECORD = [
  { name: "retention.bytes", value: "-1" },
  { name: "retention.ms", value: "-1" },
];

/** The bench's own topics on the shared broker: created fresh per row, deleted at the end of the run. */
export class BenchTopics {
  private readonly admin: Admin;
  private readonly created = new Set<string>();
  /** Creations not answered yet: `cleanup` waits for them, so a topic created while it runs is deleted too. */
  private readonly creating = new Set<Promise<unknown>>();
  /** Set by `cleanup`: an interrupted run's sections go on for a moment and must not add topics after it. */
  private closing = false;

  constructor(brokers: string[]) {
    this.admin = new Admin({ clientId: "svc-bench", bootstrapBrokers: brokers, timeout: 30_000 });
  }

  /**
   * A topic that keeps every record until the run deletes it. The stack's broker keeps 128 MiB per partition (a
   * developer's disk, `ops/stack.toml`): a run of 3M records puts ~300 MiB in each of its partitions, and a writer
   * more than 128 MiB behind at a retention check (every 60 s) had its unread records deleted — reported by the
   * writer as lost offsets, and an end-to-end row that never reached its count. The disk check (`disk-room.ts`)
   * already counts every record the run puts in a topic.
   */
  async create(name: string, partitions = 6): Promise<string> {
    if (this.closing) {
      throw new BenchError("BENCH_STEP_FAILED", `topic ${name} not created: the run's topics are being deleted`, {
        subject: name,
      });
    }
    const creation = this.admin.createTopics({ topics: [name], partitions, replicas: 1, configs: KEEP_EVERY_RECORD });
    this.creating.add(creation);
    try {
      await creation;
    } finally {
      this.creating.delete(creation);
    }
    this.created.add(name);
    return name;
  }

  /** Each partition's latest offset (its end), by partition index. */
  async endOffsets(topic: string, partitions = 6): Promise<number[]> {
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
    const ends = new Array<number>(partitions).fill(0);
    for (const entry of listed) for (const p of entry.partitions) ends[p.partitionIndex] = Number(p.offset);
    return ends;
  }

  /** The sum over partitions of the latest offsets: how many records the topic holds (nothing is compacted). */
  async total(topic: string, partitions = 6): Promise<number> {
    return (await this.endOffsets(topic, partitions)).reduce((sum, end) => sum + end, 0);
  }

  /** `group`'s committed offset of each partition of `topic` (-1 where none). */
  async committedOffsets(group: string, topic: string, partitions = 6): Promise<number[]> {
    const [listed] = await this.admin.listConsumerGroupOffsets({ groups: [group] });
    const committed = listed?.topics.find((t) => t.name === topic)?.partitions ?? [];
    return Array.from({ length: partitions }, (_, p) =>
      Number(committed.find((c) => c.partitionIndex === p)?.committedOffset ?? -1n),
    );
  }

  /**
   * Deletes every topic this run created, one request per topic (one slow deletion does not fail the others), then
   * lists the broker's topics (for up to 15 s): only a topic still there is reported as a failure (best effort, never thrown).
   */
  async cleanup(): Promise<string[]> {
    this.closing = true;
    await Promise.allSettled([...this.creating]);
    const names = [...this.created];
    await Promise.allSettled(names.map((name) => this.admin.deleteTopics({ topics: [name] })));
    const failures: string[] = [];
    try {
      // Deletion is asynchronous on the broker: a topic may be listed for a moment after the answer.
      let remaining = names;
      const deadline = Date.now() + 15_000;
      while (remaining.length > 0 && Date.now() < deadline) {
        await Bun.sleep(250);
        const left = new Set(await this.admin.listTopics());
        remaining = remaining.filter((name) => left.has(name));
      }
      if (remaining.length > 0) failures.push(`topics not deleted: ${remaining.join(", ")}`);
      this.created.clear();
    } catch (error) {
      failures.push(`could not list topics to check their deletion: ${(error as Error).message}`);
    }
    await this.admin.close().catch(() => undefined);
    return failures;
  }
}
