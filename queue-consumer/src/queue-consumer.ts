import { EventEmitter } from "node:events";
import { Consumer } from "@platformatic/kafka/clients/consumer";
import { type MetricsServer, serveMetrics } from "@svc/common";
import { PartitionFetcher } from "@svc/kafka-read";
import { SQL } from "bun";
import pino, { type Logger } from "pino";
import { BatchAgeTimer } from "./batch-age-timer.ts";
import { type BatchBody, MemoryBody } from "./batch-body.ts";
import { BatchSpool } from "./batch-spool.ts";
import type { QueueConsumerConfig } from "./config.ts";
import { ConsumerMetrics } from "./consumer-metrics.ts";
import { encodeWhilePutting } from "./encode-while-putting.ts";
import { QueueConsumerError } from "./errors.ts";
import { ensureIndexSchema } from "./index-schema.ts";
import { type OffsetGap, OffsetGapWatch } from "./offset-gaps.ts";
import type { ClosedBatch } from "./partition-batch.ts";
import { PartitionWriter } from "./partition-writer.ts";
import { putBatchObject, type WrittenObject } from "./put-batch-object.ts";
import { retryWithBackoff } from "./retry-with-backoff.ts";
import { writerS3Client } from "./s3-client.ts";
import { writeBatchIndex } from "./write-index.ts";
import { writeSlots } from "./write-slots.ts";

/** One batch made durable: PUT, indexed, offset committed (the `batch` event). */
export interface BatchWritten {
  topic: string;
  partition: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** Lines in the object. */
  records: number;
  /** Index rows inserted; `records - unindexable - inserted` events were indexed before (duplicates). */
  inserted: number;
  unindexable: number;
  object: WrittenObject;
  objectId: bigint;
  /** When its write began (it got one of the `SVC_AUDIT_WRITE_CONCURRENCY` slots) and ended, `performance.now()`. */
  writeStartedAt: number;
  writeEndedAt: number;
}

export interface QueueConsumerEvents {
  /** A batch is durable, indexed and its offset committed. */
  batch: [BatchWritten];
  /** The partitions this replica owns after a (re)join. */
  assigned: [number[]];
  /** A PUT was refused or failed: the object is not durable and the batch is tried again. */
  "put-retry": [QueueConsumerError];
  /** The consumer stopped on an error it cannot get past (a batch that can never be written). */
  failed: [unknown];
  /** Offsets of a partition were deleted from Kafka before they were read (lost to retention). */
  "offsets-lost": [OffsetGap];
}

export interface StartConsumerOptions {
  logger?: Logger;
}

export interface QueueConsumer {
  readonly metrics: ConsumerMetrics;
  readonly events: EventEmitter<QueueConsumerEvents>;
  /** `http://host:port` of `/metrics` and `/health`, when `metricsPort` is set. */
  readonly metricsUrl: string | undefined;
  /** Partitions currently assigned to this replica. */
  assignedPartitions(): number[];
  /** Bytes read and not yet committed. */
  bufferedBytes(): number;
  /**
   * Graceful stop: fetching stops, every open batch is sealed and written (PUT, index, commit) within
   * `shutdownTimeoutMs`, then the replica leaves the group. Rejects with `QUEUE_CONSUMER_SHUTDOWN_TIMEOUT` when a
   * batch could not be written in time (it is read again by the partition's next owner).
   */
  stop(): Promise<void>;
  /** Settles when the consumer has stopped: resolves after `stop()`, rejects when it failed by itself. */
  readonly done: Promise<void>;
}

/**
 * Retries of each Kafka request (500 ms apart, 6 attempts in all) before it fails and the session is replaced. Never
 * unbounded: after a process freeze longer than the session timeout, a client's group requests failed with
 * "Connection closed" on every retry, for good, and an unbounded retry never returned (a batch's commit held its
 * write, and `stop()`, forever).
 */
const KAFKA_REQUEST_RETRIES = 5;
const KAFKA_RETRY_DELAY_MS = 500;
/** A fetch waits this long for records at most (the broker answers as soon as it has any). */
const FETCH_MAX_WAIT_MS = 500;
const FETCH_MAX_BYTES = 4 * 1024 * 1024;
/** A fetch (or a position lookup) without an answer within this fails, and is tried again. */
const FETCH_TIMEOUT_MS = 5_000;

/** Room past `maxBytes` in a heap batch's buffer: the line that closes a batch by size may end beyond it. */
const BATCH_SLACK_BYTES = 1024 * 1024;

interface Session {
  consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  fetcher: PartitionFetcher;
  assigned: Set<number>;
}

/**
 * Starts the writer half of the `audit` service (docs/audit-storage.md): a member of the consumer group that keeps
 * one open batch per assigned partition, writes each closed batch as one Object-Locked JSONL object, indexes it in
 * one PostgreSQL transaction, and only then commits the partition's offset. Creates the index schema first.
 */
export async function startConsumer(
  config: QueueConsumerConfig,
  options: StartConsumerOptions = {},
): Promise<QueueConsumer> {
  const logger = options.logger ?? pino({ level: config.logLevel, base: { component: "audit-writer" } });
  const events = new EventEmitter<QueueConsumerEvents>();
  // Spooled, a batch's bytes wait in the page cache, not the heap (docs/audit-storage.md, "Spool").
  const spool = config.spoolDir === undefined ? undefined : BatchSpool.open(config.spoolDir);
  const newBody: () => BatchBody = spool
    ? () => spool.newBody()
    : () => new MemoryBody(config.batch.maxBytes + BATCH_SLACK_BYTES);
  const sql = new SQL({ url: config.pgUrl, max: config.pgPool });
  try {
    await retryWithBackoff("index schema", () => ensureIndexSchema(sql, config.indexSchema), {
      maxDelayMs: 1_000,
      maxAttempts: 5,
      signal: new AbortController().signal,
    });
  } catch (error) {
    spool?.close();
    await sql.close();
    throw error;
  }
  const s3 = writerS3Client(config.s3);
  const putSettings = { ...config, payloadSigning: config.s3.payloadSigning };

  const writers = new Map<number, PartitionWriter>();
  const ageTimer = new BatchAgeTimer(config.batch.maxAgeMs, () => writers.values());
  let session: Session | undefined;
  let buffered = 0;
  let paused = false;
  let stopping = false;
  let failure: unknown;
  let resolveDone: () => void = () => {};
  let rejectDone: (error: unknown) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => {});

  const metrics = new ConsumerMetrics({
    bufferedBytes: () => buffered,
    paused: () => paused,
    assignedPartitions: () => session?.assigned.size ?? 0,
  });
  const gaps = new OffsetGapWatch(
    async (partition) => {
      const consumer = session?.consumer;
      if (!consumer) throw new Error("no Kafka session");
      const [committed, starts] = await Promise.all([
        consumer.listCommittedOffsets({ topics: [{ topic: config.topic, partitions: [partition] }] }),
        consumer.listOffsets({ topics: [config.topic], partitions: { [config.topic]: [partition] }, timestamp: -2n }),
      ]);
      return {
        committed: committed.get(config.topic)?.[partition] ?? -1n,
        logStart: starts.get(config.topic)?.[partition] ?? 0n,
      };
    },
    (gap) => {
      metrics.offsetsLost.inc(Number(gap.to - gap.from));
      logger.error(
        { topic: config.topic, partition: gap.partition, from: String(gap.from), to: String(gap.to) },
        "records lost: these offsets were deleted from Kafka (retention) before they were written",
      );
      events.emit("offsets-lost", gap);
    },
    (error) => logger.warn({ err: error }, "offset gap check failed (no check for this partition until it moves)"),
  );
  const { maxBytes, maxRecords } = config.batch;
  const batchLimits = { maxBytes, maxRecords };

  const resumeIfRoom = () => {
    if (paused && buffered <= config.maxBufferedBytes / 2 && !stopping) {
      paused = false;
      session?.fetcher.resume();
      logger.debug({ buffered }, "fetching resumed");
    }
  };

  const writeOne = async (closed: ClosedBatch, signal: AbortSignal): Promise<void> => {
    const writeStartedAt = performance.now();
    const where = `${closed.topic}/${closed.partition}@${closed.firstOffset}`;
    // The PUT goes first: it needs the bytes only. The index rows are encoded while it is in flight (not as the
    // records arrived: a batch that waits holds its bytes only; not after it: the thread would wait on MinIO first).
    const putting = retryWithBackoff(
      `PUT ${where}`,
      () => putBatchObject(s3, putSettings, closed, new Date(), { signal, timeoutMs: config.putTimeoutMs }),
      {
        maxDelayMs: config.retryMaxMs,
        signal,
        onRetry: (error, attempt, delayMs) => {
          metrics.putRetries.inc();
          events.emit("put-retry", error);
          logger.warn({ err: error, attempt, delayMs, batch: where }, "PUT failed; retrying, nothing committed");
        },
      },
    );
    const batch = await encodeWhilePutting(closed, putting);
    const object = await putting;
    metrics.objectsWritten.inc();
    metrics.objectBytes.inc(object.bytes);
    const indexed = await retryWithBackoff(
      `index ${where}`,
      () => writeBatchIndex(sql, config.indexSchema, batch, object),
      {
        maxDelayMs: config.retryMaxMs,
        signal,
        onRetry: (error, attempt, delayMs) => {
          metrics.indexRetries.inc();
          logger.warn({ err: error, attempt, delayMs, batch: where }, "index failed; retrying, nothing committed");
        },
      },
    );
    // The index rows (~10 MB a batch) are freed now, not at a collection: they outlive the young generation while
    // the batch is written, and the old one is collected late (queue-consumer/README.md, "Memory").
    for (const chunk of batch.chunks) chunk.release();
    metrics.eventsIndexed.inc(indexed.inserted);
    metrics.eventsDuplicate.inc(batch.records - batch.unindexable - indexed.inserted);
    metrics.unindexable.inc(batch.unindexable);
    await retryWithBackoff(`commit ${where}`, () => commitOffset(batch.topic, batch.partition, batch.lastOffset + 1n), {
      maxDelayMs: config.retryMaxMs,
      signal,
      onRetry: (error, attempt) => {
        metrics.commitRetries.inc();
        logger.warn({ err: error, attempt, batch: where }, "offset commit failed; retrying");
      },
    });
    metrics.commits.inc();
    events.emit("batch", {
      topic: batch.topic,
      partition: batch.partition,
      firstOffset: batch.firstOffset,
      lastOffset: batch.lastOffset,
      records: batch.records,
      inserted: indexed.inserted,
      unindexable: batch.unindexable,
      object,
      objectId: indexed.objectId,
      writeStartedAt,
      writeEndedAt: performance.now(),
    });
    logger.debug({ key: object.key, records: batch.records, inserted: indexed.inserted }, "batch durable");
  };
  const writeBatch = writeSlots(config.writeConcurrency, writeOne);

  const commitOffset = async (topic: string, partition: number, offset: bigint): Promise<void> => {
    const current = session;
    if (!current) {
      throw new QueueConsumerError("QUEUE_CONSUMER_COMMIT_FAILED", `${topic}/${partition}: no Kafka session`, {
        subject: `${topic}/${partition}`,
        canRetry: true,
      });
    }
    try {
      await current.consumer.commit({ offsets: [{ topic, partition, offset, leaderEpoch: -1 }] });
    } catch (error) {
      // The client tried KAFKA_REQUEST_RETRIES times (and rejoined the group when told to): its session is not
      // working. A new one rereads the batch from the committed offset; this write stops at its next retry.
      if (session === current) restartSession(error);
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_COMMIT_FAILED",
        `commit ${topic}/${partition} at ${offset}: ${(error as Error).message}`,
        { subject: `${topic}/${partition}`, canRetry: true, cause: error },
      );
    }
  };

  const fail = (error: unknown) => {
    if (failure !== undefined) return;
    failure = error;
    logger.error({ err: error }, "a batch cannot be written; stopping (nothing of it was committed)");
    events.emit("failed", error);
    // During a graceful stop the stop itself reports it (`stop()` rejects with it).
    if (stopping) return;
    void shutdown(false).then(
      () => rejectDone(error),
      () => rejectDone(error),
    );
  };

  const writerFor = (partition: number): PartitionWriter => {
    let writer = writers.get(partition);
    if (!writer) {
      writer = new PartitionWriter(
        config.topic,
        partition,
        {
          write: writeBatch,
          release: (bytes) => {
            buffered -= bytes;
            resumeIfRoom();
          },
          fail,
          dropped: (batches) => metrics.batchesDropped.inc(batches),
        },
        newBody,
      );
      writers.set(partition, writer);
    }
    return writer;
  };

  const onRecord = (current: Session, partition: number, offset: bigint, timestampMs: number, value: Buffer) => {
    if (session !== current || !current.assigned.has(partition)) return;
    void gaps.received(partition, offset);
    const writer = writerFor(partition);
    const now = performance.now();
    const added = writer.add(value, offset, timestampMs, now);
    if (added === 0) return;
    if (writer.openRecords === 1) ageTimer.due(writer.dueAt(config.batch.maxAgeMs) ?? now);
    metrics.noteRecordRead();
    buffered += added;
    if (writer.isFull(batchLimits)) writer.seal();
    if (!paused && buffered > config.maxBufferedBytes) {
      paused = true;
      current.fetcher.pause();
      // Write what is held now: waiting for the batches to fill or age would stall a paused consumer.
      for (const open of writers.values()) open.seal();
      logger.debug({ buffered }, "fetching paused: buffer full");
    }
  };

  /** Revokes the writers of partitions this replica no longer owns (their uncommitted batches are dropped). */
  const applyAssignment = (assigned: Set<number>) => {
    for (const [partition, writer] of writers) {
      if (!assigned.has(partition)) {
        writer.revoke();
        writers.delete(partition);
      }
    }
    events.emit(
      "assigned",
      [...assigned].sort((a, b) => a - b),
    );
    logger.info({ partitions: [...assigned] }, "partitions assigned");
  };

  const assignmentOf = (consumer: Consumer<Buffer, Buffer, Buffer, Buffer>): Set<number> =>
    new Set(consumer.assignments?.find((a) => a.topic === config.topic)?.partitions ?? []);

  let restarting: Promise<void> | undefined;
  const openSession = async (): Promise<Session> => {
    const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
      clientId: config.clientId,
      bootstrapBrokers: config.brokers,
      groupId: config.groupId,
      autocommit: false,
      sessionTimeout: config.sessionTimeoutMs,
      rebalanceTimeout: config.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(config.sessionTimeoutMs / 10)),
      retries: KAFKA_REQUEST_RETRIES,
      retryDelay: KAFKA_RETRY_DELAY_MS,
    });
    const current: Session = { consumer, fetcher: undefined as never, assigned: new Set() };
    current.fetcher = new PartitionFetcher(consumer, {
      clientId: config.clientId,
      topic: config.topic,
      maxWaitMs: FETCH_MAX_WAIT_MS,
      // An answer is read whole, paused or not: a small one keeps memory bounded.
      maxBytes: FETCH_MAX_BYTES,
      requestTimeoutMs: FETCH_TIMEOUT_MS,
      retries: KAFKA_REQUEST_RETRIES,
      retryDelayMs: KAFKA_RETRY_DELAY_MS,
      onRecord: (partition, offset, timestampMs, value) => onRecord(current, partition, offset, timestampMs, value),
      // Fetching failed again and again: the session is not working; a new one rereads from the commits.
      onFailure: (error) => {
        if (session === current) restartSession(error);
      },
      onRetry: (error) => logger.debug({ err: error }, "fetch failed; fetching again"),
    });
    /** The group's assignment now: fetched from, written for, watched for gaps. */
    const takeAssignment = () => {
      current.assigned = assignmentOf(consumer);
      current.fetcher.assign(current.assigned);
      applyAssignment(current.assigned);
      gaps.assigned(current.assigned);
    };
    consumer.on("consumer:group:join", () => {
      if (session === current) takeAssignment();
    });
    // A rebalance is coming: write what we hold now, so partitions handed over carry little uncommitted data.
    consumer.on("consumer:group:rebalance", () => {
      if (session === current) for (const writer of writers.values()) writer.seal();
    });
    consumer.on("error", (error: unknown) => {
      if (session === current) restartSession(error);
    });
    // No heartbeat succeeded for a session timeout (or a rejoin did not finish in time): the group has most likely
    // given our partitions to another member already.
    consumer.on("consumer:heartbeat:stalled", (stall: { lastError?: unknown }) => {
      if (session === current) restartSession(stall.lastError ?? new Error("Kafka heartbeats stalled"));
    });
    try {
      consumer.topics.track(config.topic);
      await consumer.joinGroup({});
    } catch (error) {
      await current.fetcher.close();
      await consumer.close(true).catch(() => {});
      throw error;
    }
    session = current;
    takeAssignment();
    return current;
  };

  /**
   * The session failed (group membership lost, fetching failed again and again): every uncommitted batch is dropped, and a new
   * session starts from the committed offsets. Nothing is lost: what was dropped was never committed.
   */
  const restartSession = (error: unknown) => {
    if (stopping || restarting) return;
    logger.warn({ err: error }, "Kafka session failed; starting a new one from the committed offsets");
    metrics.sessionRestarts.inc();
    const old = session;
    session = undefined;
    // The fetching stops first: nothing fetched under the old session reaches a writer.
    void old?.fetcher.close();
    restarting = (async () => {
      for (const writer of writers.values()) writer.revoke();
      await Promise.all([...writers.values()].map((w) => w.idle()));
      writers.clear();
      await old?.consumer.close(true).catch(() => {});
      paused = false;
      for (let attempt = 1; !stopping; attempt++) {
        try {
          await openSession();
          return;
        } catch (openError) {
          logger.warn({ err: openError, attempt }, "cannot start a Kafka session; retrying");
          await Bun.sleep(Math.min(config.retryMaxMs, 500 * attempt));
        }
      }
    })().finally(() => {
      restarting = undefined;
    });
  };

  let stopped: Promise<void> | undefined;
  const shutdown = (flush: boolean): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      ageTimer.stop();
      await restarting;
      const current = session;
      current?.fetcher.pause();
      let timedOut = false;
      if (flush) {
        for (const writer of writers.values()) writer.seal();
        const drained = Promise.all([...writers.values()].map((w) => w.idle()));
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), config.shutdownTimeoutMs);
        });
        timedOut = (await Promise.race([drained, timeout])) === "timeout";
        clearTimeout(timer);
      }
      for (const writer of writers.values()) writer.revoke();
      await Promise.all([...writers.values()].map((w) => w.idle()));
      writers.clear();
      session = undefined;
      if (current) {
        await current.fetcher.close();
        await current.consumer.close().catch(() => current.consumer.close(true).catch(() => {}));
      }
      await metricsServer?.stop();
      s3.destroy();
      spool?.close();
      await sql.close();
      if (timedOut) {
        throw new QueueConsumerError(
          "QUEUE_CONSUMER_SHUTDOWN_TIMEOUT",
          `batches not written within ${config.shutdownTimeoutMs} ms; their records are read again by the next owner`,
        );
      }
      // A batch that could not be kept or written while stopping (a spool file that cannot be written): its
      // records are read again by the next owner, and the stop says why it did not write them.
      if (flush && failure !== undefined) throw failure;
    })();
    return stopped;
  };

  let metricsServer: MetricsServer | undefined;
  try {
    if (config.metricsPort !== undefined) {
      metricsServer = serveMetrics({
        host: config.metricsHost,
        port: config.metricsPort,
        registry: metrics.registry,
        health: () => {
          const healthy = session !== undefined && failure === undefined && !stopping;
          return {
            healthy,
            body: {
              status: healthy ? "consuming" : failure ? "failed" : stopping ? "stopping" : "joining",
              partitions: [...(session?.assigned ?? [])],
              bufferedBytes: buffered,
              paused,
            },
          };
        },
        listenError: (address, cause) =>
          new QueueConsumerError(
            "QUEUE_CONSUMER_METRICS_LISTEN_FAILED",
            `cannot listen on ${address}: ${(cause as Error).message}`,
            { subject: address, cause },
          ),
      });
    }
    await openSession();
  } catch (error) {
    stopping = true;
    ageTimer.stop();
    await metricsServer?.stop();
    s3.destroy();
    spool?.close();
    await sql.close();
    throw new QueueConsumerError(
      "QUEUE_CONSUMER_STREAM_FAILED",
      `cannot start consuming: ${(error as Error).message}`,
      {
        cause: error,
        canRetry: true,
      },
    );
  }

  return {
    metrics,
    events,
    metricsUrl: metricsServer?.url,
    assignedPartitions: () => [...(session?.assigned ?? [])].sort((a, b) => a - b),
    bufferedBytes: () => buffered,
    stop: () =>
      shutdown(true).then(
        () => resolveDone(),
        (error: unknown) => {
          resolveDone();
          throw error;
        },
      ),
    done,
  };
}
