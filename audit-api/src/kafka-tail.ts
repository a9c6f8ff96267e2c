import { randomUUID } from "node:crypto";
import { Consumer, type MessagesStream } from "@platformatic/kafka/clients/consumer";
import { backoffMs } from "@svc/common";
import type { SQL } from "bun";
import type { Logger } from "pino";
import { TailStore } from "./tail-store.ts";

export interface TailSettings {
  brokers: string[];
  topic: string;
  /** Records held at most; above, fetching waits for the marks to advance. */
  maxRecords: number;
  /** How often `marks` is read (what the index holds now). */
  refreshMs: number;
}

/** Kafka's ListOffsets timestamp for "the first offset still in the log". */
const EARLIEST = -2n;

/**
 * The freshness tail (docs/audit-storage.md, "Freshness"): every partition of the audit topic read from its
 * `marks.indexed_through + 1` (or past what it read already) into a `TailStore`, through a consumer group of this
 * replica alone (random id, no commits), with `marks` re-read every `refreshMs` to drop what the index now holds.
 * It never fails the API: while Kafka or the marks cannot be read it retries with backoff and the answers come
 * from the index alone (fresh records appear later, none is lost or doubled). `stop()` ends it.
 */
export class KafkaTail {
  readonly store = new TailStore();
  private stopped = false;
  private readonly timer: ReturnType<typeof setInterval>;
  private consumer: Consumer<Buffer, Buffer, Buffer, Buffer> | undefined;
  private stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  private readonly running: Promise<void>;
  private wakeUp: (() => void) | undefined;
  private interruptBackoff: (() => void) | undefined;
  /** The next offset to read per partition (past what was read), so a restart does not read twice. */
  private readonly next = new Map<number, bigint>();

  private constructor(
    private readonly sql: SQL,
    private readonly marksTable: string,
    private readonly settings: TailSettings,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => {
      this.readMarks().catch((error: unknown) => this.logger.warn({ err: error }, "freshness tail: marks not read"));
    }, settings.refreshMs);
    this.running = this.run();
  }

  /** Starts reading in the background (never throws: see the class). */
  static start(sql: SQL, schema: string, settings: TailSettings, logger: Logger): KafkaTail {
    return new KafkaTail(sql, `"${schema}".marks`, settings, logger);
  }

  private async readMarks(): Promise<void> {
    const rows = (await this.sql.unsafe(
      `SELECT partition, indexed_through::text AS mark FROM ${this.marksTable} WHERE topic = $1`,
      [this.settings.topic],
    )) as { partition: number; mark: string }[];
    this.store.advanceMarks(new Map(rows.map((row) => [row.partition, BigInt(row.mark)])));
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    /** Failures in a row (a stream that began resets the count). */
    let failures = 0;
    while (!this.stopped) {
      try {
        const stream = await this.begin();
        failures = 0;
        await this.read(stream);
      } catch (error) {
        failures++;
        if (!this.stopped) this.logger.warn({ err: error }, `freshness tail: not reading (${failures} in a row)`);
      }
      await this.closeConsumer();
      if (this.stopped) return;
      const delay = backoffMs(failures, 5_000);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.interruptBackoff = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private async begin(): Promise<MessagesStream<Buffer, Buffer, Buffer, Buffer>> {
    const { topic, brokers } = this.settings;
    await this.readMarks();
    const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
      clientId: "svc-audit-api-tail",
      bootstrapBrokers: brokers,
      groupId: `svc-audit-api-tail-${randomUUID()}`,
      autocommit: false,
      maxWaitTime: 100,
      sessionTimeout: 10_000,
      rebalanceTimeout: 10_000,
      heartbeatInterval: 1_000,
      retries: 1,
    });
    this.consumer = consumer;
    const metadata = await consumer.metadata({ topics: [topic] });
    const partitions = metadata.topics.get(topic)?.partitionsCount ?? 0;
    const earliest = (await consumer.listOffsets({ topics: [topic], timestamp: EARLIEST })).get(topic) ?? [];
    const offsets = Array.from({ length: partitions }, (_, partition) => {
      const mark = this.store.markOf(partition);
      const fromMark = mark === undefined ? (earliest[partition] ?? 0n) : mark + 1n;
      const read = this.next.get(partition) ?? 0n;
      return { topic, partition, offset: read > fromMark ? read : fromMark };
    });
    this.stream = await consumer.consume({
      topics: [topic],
      mode: "manual",
      fallbackMode: "earliest",
      offsets,
      autocommit: false,
      maxWaitTime: 100,
    });
    this.logger.info({ topic, partitions }, "freshness tail reading");
    return this.stream;
  }

  private async read(stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>): Promise<void> {
    for await (const message of stream) {
      while (this.store.size >= this.settings.maxRecords && !this.stopped) {
        await new Promise<void>((resolve) => {
          this.wakeUp = resolve;
        });
      }
      if (this.stopped) return;
      this.next.set(message.partition, message.offset + 1n);
      if (message.value) this.store.add(message.partition, message.offset, message.value);
    }
  }

  private async closeConsumer(): Promise<void> {
    const [stream, consumer] = [this.stream, this.consumer];
    this.stream = undefined;
    this.consumer = undefined;
    await stream?.close().catch(() => {});
    await consumer?.close(true).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wakeUp?.();
    this.interruptBackoff?.();
    await this.closeConsumer();
    await this.running;
  }
}
