import type { Consumer } from "@platformatic/kafka/clients/consumer";
import { type Broker, type Connection, ConnectionPool } from "@platformatic/kafka/network";
import { KafkaReadError } from "./errors.ts";
import {
  FETCH_API_KEY,
  FETCH_VERSION,
  type FetchAnswer,
  fetchRequest,
  joinedBytes,
  parseFetchResponse,
  type RecordSink,
  readRecordBatches,
} from "./kafka-fetch.ts";

const OFFSET_OUT_OF_RANGE = 1;
const EARLIEST = -2n;

export interface FetcherOptions {
  clientId: string;
  topic: string;
  maxWaitMs: number;
  maxBytes: number;
  /** A fetch (or a position lookup) without an answer within this fails. */
  requestTimeoutMs: number;
  /** Fetches failing one after another before the fetcher gives up (`onFailure`). */
  retries: number;
  retryDelayMs: number;
  /** Each record of an assigned partition, in offset order per partition; `value` is valid during the call only. */
  onRecord: (partition: number, offset: bigint, timestampMs: number, value: Buffer) => void;
  /** Fetching failed `retries` + 1 times in a row (the broker is gone, or the group's view is wrong): it stopped. */
  onFailure: (error: unknown) => void;
  /** A partition error that fetching again may mend (a leader moving): logged, and the metadata read again. */
  onRetry?: (error: unknown) => void;
}

type OffsetsClient = Pick<
  Consumer<Buffer, Buffer, Buffer, Buffer>,
  "metadata" | "listCommittedOffsets" | "listOffsets"
>;

/**
 * Fetches the records of a topic's partitions and hands each to `onRecord`, so that a record costs an offset, a
 * timestamp and a view of the answer's bytes (`kafka-fetch.ts`; docs/audit-storage.md, "Reading"). One fetch at a
 * time per leader; a fetch already sent when `pause()` is called still delivers its records. Two ways to start:
 *
 * - `assign(partitions)`, the queue consumer: the partitions a consumer group assigned to this replica, each from
 *   its committed offset (the earliest when none). The group's client keeps the membership, heartbeats and commits.
 *   A partition newly assigned is read from its commit, never from a position this replica held before: another
 *   member may have owned it meanwhile, and the records between its commit and that position would be skipped.
 * - `assignAt(positions)`, the audit API's freshness tail: positions the caller knows (the index's marks), with no
 *   group at all — no coordinator to find, no join to wait for, nothing left on the broker.
 *
 * The client passed in only answers metadata, committed offsets (`assign` alone) and earliest offsets; it is
 * never made to join a group here.
 */
export class PartitionFetcher {
  readonly #options: FetcherOptions;
  readonly #consumer: OffsetsClient;
  readonly #pool: ConnectionPool;
  /**
   * Assigned partitions whose next offset is known, in the order the next fetch names them: a partition that was
   * answered with records moves to the end.
   */
  readonly #positions = new Map<number, bigint>();
  /** Bumped by each `assign`: a position lookup or a fetch begun under an older assignment is not applied. */
  #generation = 0;
  #paused = false;
  #closed = false;
  #wake = Promise.withResolvers<void>();
  #staleMetadata = false;
  #failures = 0;
  /** The partitions last found without a leader (`#noteLeaderless`), joined. */
  #leaderless = "";
  /** Where an answer's chunks are joined to be read, reused (`joinedBytes`). */
  #scratch: Buffer = Buffer.alloc(0);

  constructor(consumer: OffsetsClient, options: FetcherOptions) {
    this.#consumer = consumer;
    this.#options = options;
    this.#pool = new ConnectionPool(options.clientId, { requestTimeout: options.requestTimeoutMs });
    void this.#run();
  }

  /** The partitions assigned now: those kept keep their position, new ones are read from their commit. */
  assign(partitions: ReadonlySet<number>): void {
    this.#generation += 1;
    for (const partition of this.#positions.keys()) {
      if (!partitions.has(partition)) this.#positions.delete(partition);
    }
    // New ones, and any whose lookup the previous assignment had begun (it is abandoned: a new generation).
    const unknown = [...partitions].filter((partition) => !this.#positions.has(partition));
    if (unknown.length > 0) void this.#lookUp(unknown, this.#generation, "commit");
    this.#signal();
  }

  /**
   * Reads exactly these partitions, each from the offset given (the earliest kept where it is `undefined`), whatever
   * was read before: positions held are replaced.
   */
  assignAt(positions: ReadonlyMap<number, bigint | undefined>): void {
    this.#generation += 1;
    this.#positions.clear();
    const unknown: number[] = [];
    for (const [partition, offset] of positions) {
      if (offset === undefined) unknown.push(partition);
      else this.#positions.set(partition, offset);
    }
    if (unknown.length > 0) void this.#lookUp(unknown, this.#generation, "earliest");
    this.#signal();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#signal();
  }

  /** Stops fetching: a fetch in flight is abandoned (its connection closed) and delivers nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#signal();
    await this.#pool.close().catch(() => {});
  }

  #signal(): void {
    this.#wake.resolve();
  }

  /**
   * Where to fetch `partitions` from: the committed offset of each, the earliest where none was committed (`commit`),
   * or the earliest (`earliest`: a position deleted by retention before it was read). Meanwhile they are not fetched.
   */
  async #lookUp(partitions: number[], generation: number, from: "commit" | "earliest"): Promise<void> {
    const { topic } = this.#options;
    for (const partition of partitions) this.#positions.delete(partition);
    while (!this.#closed && generation === this.#generation) {
      try {
        const committed =
          from === "commit"
            ? (await this.#consumer.listCommittedOffsets({ topics: [{ topic, partitions }] })).get(topic)
            : undefined;
        const committedOf = (partition: number) => committed?.[partition] ?? -1n;
        const missing = partitions.filter((partition) => committedOf(partition) < 0n);
        const earliest =
          missing.length > 0
            ? (
                await this.#consumer.listOffsets({
                  topics: [topic],
                  partitions: { [topic]: missing },
                  timestamp: EARLIEST,
                })
              ).get(topic)
            : undefined;
        if (generation !== this.#generation) return;
        for (const partition of partitions) {
          const offset = committedOf(partition) >= 0n ? committedOf(partition) : earliest?.[partition];
          if (offset === undefined || offset < 0n) throw fetchFailed(topic, `no offset for ${topic}/${partition}`);
          this.#positions.set(partition, offset);
        }
        this.#failures = 0;
        this.#signal();
        return;
      } catch (error) {
        if (this.#fail(error)) return;
        await Bun.sleep(this.#options.retryDelayMs);
      }
    }
  }

  /** Counts a failure; true when that was one too many (the fetcher then stops and reports it). */
  #fail(error: unknown): boolean {
    if (this.#closed) return true;
    this.#failures += 1;
    this.#staleMetadata = true;
    if (this.#failures <= this.#options.retries) {
      this.#options.onRetry?.(error);
      return false;
    }
    this.#closed = true;
    this.#signal();
    const { topic, retries } = this.#options;
    this.#options.onFailure(
      fetchFailed(topic, `fetching ${topic} failed ${retries + 1} times in a row: ${(error as Error).message}`, error),
    );
    return true;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      if (this.#paused || this.#positions.size === 0) {
        await this.#wake.promise;
        this.#wake = Promise.withResolvers<void>();
        continue;
      }
      try {
        await this.#fetchOnce();
        this.#failures = 0;
      } catch (error) {
        if (this.#fail(error)) return;
        this.#wake = Promise.withResolvers<void>();
        await Promise.race([Bun.sleep(this.#options.retryDelayMs), this.#wake.promise]);
      }
    }
  }

  /** One fetch from each leader of the partitions with a known position; their records go to `onRecord`. */
  async #fetchOnce(): Promise<void> {
    const { topic } = this.#options;
    const metadata = await this.#consumer.metadata({ topics: [topic], forceUpdate: this.#staleMetadata });
    this.#staleMetadata = false;
    const generation = this.#generation;
    const byLeader = new Map<Broker, Map<number, bigint>>();
    const leaderless: number[] = [];
    for (const [partition, offset] of this.#positions) {
      const broker = metadata.brokers.get(metadata.topics.get(topic)?.partitions[partition]?.leader ?? -1);
      if (broker === undefined) {
        leaderless.push(partition);
        continue;
      }
      const positions = byLeader.get(broker) ?? new Map<number, bigint>();
      positions.set(partition, offset);
      byLeader.set(broker, positions);
    }
    // None to fetch from: a failure like any other (counted, reported through `onRetry` once per try).
    if (byLeader.size === 0)
      throw fetchFailed(topic, `${topic}: no leader known for partitions ${leaderless.join(", ")}`);
    this.#noteLeaderless(leaderless);
    const answers = await Promise.all(
      [...byLeader].map(async ([broker, positions]) => {
        const answer = await this.#fetch(broker, positions);
        return { positions, answer };
      }),
    );
    if (this.#closed) return;
    let retry: unknown;
    const outOfRange: number[] = [];
    for (const { positions, answer } of answers) {
      if (answer.errorCode !== 0) retry ??= fetchFailed(topic, `fetch ${topic}: Kafka error ${answer.errorCode}`);
      for (const part of answer.partitions) {
        const from = positions.get(part.partition);
        // Assigned elsewhere meanwhile, or moved on: the answer is not for the position held now.
        if (from === undefined || generation !== this.#generation || this.#positions.get(part.partition) !== from)
          continue;
        if (part.errorCode === OFFSET_OUT_OF_RANGE) {
          // Deleted by retention before it was read: go on from the oldest record kept (the gap is reported).
          outOfRange.push(part.partition);
        } else if (part.errorCode !== 0) {
          retry ??= fetchFailed(topic, `fetch ${topic}/${part.partition}: Kafka error ${part.errorCode}`);
        } else if (part.records !== undefined) {
          const sink: RecordSink = (offset, timestampMs, value) =>
            this.#options.onRecord(part.partition, offset, timestampMs, value);
          const joined = joinedBytes(part.records, this.#scratch);
          this.#scratch = joined.scratch;
          const next = readRecordBatches(joined.bytes, from, sink);
          // To the end of the order the next request names the partitions in: a broker fills an answer in that order,
          // so a partition always asked first would take every answer while it has a backlog and starve the others
          // (as the Java consumer does, `movePartitionToEnd`).
          this.#positions.delete(part.partition);
          this.#positions.set(part.partition, next);
        }
      }
    }
    if (outOfRange.length > 0) void this.#lookUp(outOfRange, generation, "earliest");
    if (retry !== undefined) throw retry;
  }

  /**
   * Partitions without a known leader (a broker down, an election under way) are left out of the fetch while the
   * others are read; the metadata is asked again, and `onRetry` hears of each new set once (not every fetch).
   */
  #noteLeaderless(partitions: number[]): void {
    const key = partitions.join(",");
    if (key !== "") this.#staleMetadata = true;
    if (key === this.#leaderless) return;
    this.#leaderless = key;
    if (key !== "") {
      const { topic } = this.#options;
      this.#options.onRetry?.(
        fetchFailed(topic, `${topic}: no leader known for partitions ${key}; reading the others`),
      );
    }
  }

  async #fetch(broker: Broker, positions: Map<number, bigint>): Promise<FetchAnswer> {
    const connection: Connection = await this.#pool.get(broker);
    const { topic, maxWaitMs, maxBytes } = this.#options;
    return await new Promise<FetchAnswer>((resolve, reject) => {
      connection.send(
        FETCH_API_KEY,
        FETCH_VERSION,
        () => fetchRequest(topic, positions, { maxWaitMs, maxBytes }),
        parseFetchResponse,
        true,
        true,
        (error: Error | null, answer: FetchAnswer | undefined) => {
          if (error !== null || answer === undefined) reject(error ?? new Error("fetch: no answer"));
          else resolve(answer);
        },
      );
    });
  }
}

function fetchFailed(topic: string, message: string, cause?: unknown): KafkaReadError {
  return new KafkaReadError("KAFKA_READ_FETCH_FAILED", message, { subject: topic, canRetry: true, cause });
}
