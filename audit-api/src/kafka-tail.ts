import { Consumer } from "@platformatic/kafka/clients/consumer";
import { backoffMs } from "@svc/common";
import { PartitionFetcher } from "@svc/kafka-read";
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
  /** How often the topic's partition count is read again (partitions added are then read too); 30 s when unset. */
  partitionsCheckMs?: number;
}

/** Bytes a fetch answer holds at most: the store's cap counts records, so one answer may go past it by this much. */
const FETCH_MAX_BYTES = 4 * 1024 * 1024;
/** Fetches failing in a row before the tail starts over (new client, positions from the marks again). */
const FETCH_RETRIES = 3;
const FETCH_RETRY_DELAY_MS = 250;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The freshness tail (docs/audit-storage.md, "Freshness"): every partition of the audit topic read from its
 * `marks.indexed_through + 1` (or past what it read already) into a `TailStore`, by a `PartitionFetcher` at those
 * positions — no consumer group (nothing to join or wait for, nothing left on the broker, no commits) — with
 * `marks` re-read every `refreshMs` to drop what the index now holds. It never fails the API: while Kafka or the
 * marks cannot be read it retries with backoff and the answers come from the index alone (fresh records appear
 * later, none is lost or doubled). `stop()` ends it.
 */
export class KafkaTail {
  readonly store = new TailStore();
  private stopped = false;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly partitionsTimer: ReturnType<typeof setInterval>;
  /** Partitions of the topic when the current read began (0 while none is reading). */
  private partitions = 0;
  private consumer: Consumer<Buffer, Buffer, Buffer, Buffer> | undefined;
  private fetcher: PartitionFetcher | undefined;
  /** Whether this tail paused `fetcher` (the store full). */
  private paused = false;
  private readonly running: Promise<void>;
  /** Ends the current read (the fetcher failed, or `stop()`). */
  private endRead: ((error?: unknown) => void) | undefined;
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
    this.partitionsTimer = setInterval(() => {
      this.checkPartitions().catch((error: unknown) =>
        this.logger.warn({ err: error }, "freshness tail: partition count not read"),
      );
    }, settings.partitionsCheckMs ?? 30_000);
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
    this.pauseWhileFull();
  }

  /**
   * Fetching waits while the store is full, and goes on once the marks dropped enough (only then: a resume wakes
   * the fetcher, and waking it at every refresh would cut its retry delay short).
   */
  private pauseWhileFull(): void {
    const full = this.store.size >= this.settings.maxRecords;
    if (full === this.paused || this.fetcher === undefined) return;
    this.paused = full;
    if (full) this.fetcher.pause();
    else this.fetcher.resume();
  }

  /** A topic grown since the read began (partitions added): the read starts over, from the same positions, with them. */
  private async checkPartitions(): Promise<void> {
    const [consumer, known, { topic }] = [this.consumer, this.partitions, this.settings];
    if (consumer === undefined || known === 0) return;
    const metadata = await consumer.metadata({ topics: [topic], forceUpdate: true });
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    if (count <= known || consumer !== this.consumer) return;
    this.logger.info({ topic, partitions: count, before: known }, "freshness tail: partitions added; reading them too");
    this.endRead?.();
  }

  private async run(): Promise<void> {
    /** Failures in a row (a read that began resets the count). */
    let failures = 0;
    while (!this.stopped) {
      try {
        const { ended } = await this.begin();
        failures = 0;
        await ended;
      } catch (error) {
        failures++;
        if (!this.stopped) this.logger.warn({ err: error }, `freshness tail: not reading (${failures} in a row)`);
      }
      await this.closeReader();
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

  /**
   * Starts reading every partition from past its mark (or past what was read), and returns once it began with a
   * promise that settles when the read ends: rejected with the fetcher's failure, resolved by `stop()`. Rejects
   * before reading when the marks or the metadata cannot be read (the topic unknown: "Unknown topic").
   */
  private async begin(): Promise<{ ended: Promise<void> }> {
    const { topic, brokers } = this.settings;
    await this.readMarks();
    // Asked for metadata and offsets only: the fetcher never joins the group this client is made to name.
    const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
      clientId: "svc-audit-api-tail",
      bootstrapBrokers: brokers,
      groupId: "svc-audit-api-tail",
      retries: 1,
      timeout: REQUEST_TIMEOUT_MS,
    });
    this.consumer = consumer;
    const metadata = await consumer.metadata({ topics: [topic] });
    const partitions = metadata.topics.get(topic)?.partitionsCount ?? 0;
    this.partitions = partitions;
    const positions = new Map<number, bigint | undefined>();
    for (let partition = 0; partition < partitions; partition++) {
      const mark = this.store.markOf(partition);
      const fromMark = mark === undefined ? undefined : mark + 1n;
      const read = this.next.get(partition);
      // Past what was read already (a restart reads nothing twice), else from the mark, else the earliest kept.
      positions.set(partition, read !== undefined && (fromMark === undefined || read > fromMark) ? read : fromMark);
    }
    const ended = new Promise<void>((resolve, reject) => {
      this.endRead = (error) => (error === undefined ? resolve() : reject(error));
    });
    if (this.stopped) return { ended: Promise.resolve() }; // stopped while the metadata was read
    const fetcher = new PartitionFetcher(consumer, {
      clientId: "svc-audit-api-tail",
      topic,
      maxWaitMs: 100,
      maxBytes: FETCH_MAX_BYTES,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      retries: FETCH_RETRIES,
      retryDelayMs: FETCH_RETRY_DELAY_MS,
      onRecord: (partition, offset, _timestampMs, value) => this.take(partition, offset, value),
      onFailure: (error) => this.endRead?.(error),
      onRetry: (error) => this.logger.warn({ err: error }, "freshness tail: fetch failed, trying again"),
    });
    this.fetcher = fetcher;
    this.paused = false;
    this.pauseWhileFull(); // a tail started over while full waits as well
    fetcher.assignAt(positions);
    this.logger.info({ topic, partitions }, "freshness tail reading");
    return { ended };
  }

  /** One record read: kept (a copy: `value` is valid during the call only) unless indexed; full → fetching pauses. */
  private take(partition: number, offset: bigint, value: Buffer): void {
    if (this.stopped) return;
    this.next.set(partition, offset + 1n);
    this.store.add(partition, offset, Buffer.from(value));
    this.pauseWhileFull();
  }

  /** Closes the current read's fetcher (first, so that it reports nothing on its way out) and client. */
  private async closeReader(): Promise<void> {
    const [fetcher, consumer] = [this.fetcher, this.consumer];
    this.fetcher = undefined;
    this.consumer = undefined;
    this.endRead = undefined;
    this.partitions = 0;
    await fetcher?.close().catch(() => {});
    await consumer?.close(true).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.partitionsTimer);
    this.endRead?.();
    this.interruptBackoff?.();
    // A read still beginning waits on the client (metadata, with retries, while Kafka is away): closing the client
    // ends those requests at once.
    await this.closeReader();
    await this.running;
  }
}
