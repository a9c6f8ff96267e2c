import { Producer } from "@platformatic/kafka/clients/producer";
import { serveMetrics } from "@svc/common";
import pino, { type Logger } from "pino";
import { AgentMetrics } from "./agent-metrics.ts";
import { type Checkpoint, prepareCheckpointDirectory, readCheckpoint } from "./checkpoint-file.ts";
import { CheckpointWriter } from "./checkpoint-writer.ts";
import type { DeadLetter } from "./classify-line.ts";
import { classifyBytes } from "./classify-line.ts";
import type { AgentConfig } from "./config.ts";
import { AgentError } from "./errors.ts";
import type { LineSource } from "./line-source.ts";
import { ReadBuffers } from "./read-buffers.ts";
import { ReadStdin } from "./read-stdin.ts";
import { RecordSender } from "./record-sender.ts";
import { type Batch, type KafkaMessage, ShipBatches } from "./ship-batches.ts";
import type { SourceFile } from "./source-file.ts";
import { LineSplitter, type SourceLine } from "./split-lines.ts";
import { TailFile } from "./tail-file.ts";
import { Wakeup } from "./wakeup.ts";

export type AgentState = "shipping" | "kafka-retrying" | "checkpoint-failed" | "stopping" | "stopped" | "failed";

export interface Agent {
  readonly metrics: AgentMetrics;
  /** `http://host:port` of `/metrics` and `/health`, when SVC_AGENT_METRICS_PORT is set. */
  readonly metricsUrl: string | undefined;
  state(): AgentState;
  /**
   * Graceful shutdown: stops reading, sends what was read, waits for Kafka's acknowledgements and the checkpoint,
   * then closes. Rejects with AGENT_SHUTDOWN_TIMEOUT when that takes longer than `shutdownTimeoutMs` (what was not
   * acknowledged is read again at the next start).
   */
  stop(): Promise<void>;
  /**
   * Settles when the agent is over: resolves when standard input ended and was drained or when stop() finished;
   * rejects on a fatal error (or a stop() that failed).
   */
  readonly done: Promise<void>;
}

export interface StartAgentOptions {
  logger?: Logger;
  /** Standard input replacement (tests). */
  stdin?: ReadableStream<Uint8Array>;
}

const enc = (text: string) => Buffer.from(text);
// A dead letter's header names: the same bytes for every message.
const HEADER_REASON = enc("reason");
const HEADER_SOURCE = enc("source");
const HEADER_FILE_ID = enc("file-id");
const HEADER_OFFSET = enc("offset");
const HEADER_LINE_ERROR = enc("line-error");
const HEADER_REDACTED = enc("redacted");
/** Bytes per read buffer, and the least room left in one that is still read into (ReadBuffers). */
const READ_BUFFER_BYTES = 256 * 1024;
const READ_MIN_ROOM = 32 * 1024;
/**
 * Least time between two checkpoint writes. Each write opens, syncs and renames (its open blocked the agent's
 * thread for ~18 ms at a time on the loaded bench machine); a crash re-ships at most this much more.
 */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * What a dead letter weighs beyond its value and headers' bytes: the record's framing and the message's objects (its
 * header map and buffers). A batch of short bad lines is sized and bounded by this, not by their few source bytes.
 */
const DEAD_LETTER_OVERHEAD = 512;
/** How long closing waits for the newest acknowledged position to be written after a failed drain. */
const FINAL_CHECKPOINT_WAIT_MS = 2_000;

/** Starts the log agent (spec: `audit-logagent`; docs/audit-storage.md, "Kafka"). */
export async function startAgent(config: AgentConfig, options: StartAgentOptions = {}): Promise<Agent> {
  const log = (options.logger ?? pino({ level: config.logLevel })).child({ component: "audit-logagent" });
  const checkpointFile = config.checkpointFile;
  let checkpoint: Checkpoint | undefined;
  if (checkpointFile !== undefined) {
    checkpoint = await readCheckpoint(checkpointFile);
    await prepareCheckpointDirectory(checkpointFile);
  }
  // Enough free buffers for the in-flight bound: reading never waits for the collector to free one.
  const buffers = new ReadBuffers(
    READ_BUFFER_BYTES,
    READ_MIN_ROOM,
    Math.ceil(config.maxInFlightBytes / (READ_BUFFER_BYTES - READ_MIN_ROOM)) + 1,
  );
  const wakeup = new Wakeup();
  const stdin = config.source === "-";
  const source: LineSource = stdin
    ? new ReadStdin(options.stdin)
    : await TailFile.open(config.source, checkpoint, {
        rotateGraceMs: config.rotateGraceMs,
        log,
        buffers,
        onChange: () => wakeup.wake(),
      });

  const splitter = new LineSplitter(config.maxLineBytes);
  let bytesRead = 0;
  let bytesDone = 0;
  let stopRequested = false;
  /** A stop that reads on first (`stopReadMs`): resolved once the source has nothing left unread. */
  let readingToEnd: { resolve: () => void } | undefined;
  let fatal: AgentError | undefined;
  let finalState: AgentState | undefined;

  // Only for metadata and producer ids (its `send` is not used: acks and idempotence are RecordSender's).
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: config.clientId,
    bootstrapBrokers: config.brokers,
    timeout: config.kafkaTimeoutMs,
    retries: 2,
    retryDelay: 250,
    autocreateTopics: false,
  });
  const sender = new RecordSender({
    producer,
    clientId: config.clientId,
    timeoutMs: config.kafkaTimeoutMs,
    // A batch closes past batchBytes by at most one line; the records' framing is far below another batchBytes.
    slabBytes: 2 * config.batchBytes + config.maxLineBytes,
    slabs: config.sendConcurrency + 1,
  });

  // Assigned just below; the gauges are only read at scrape time.
  let shipper: ShipBatches | undefined;
  let writer: CheckpointWriter | undefined;
  const inFlight = () => (shipper?.inFlightBytes ?? 0) + splitter.heldBytes;
  const metrics = new AgentMetrics({
    bytesBehind: () => source.bytesUnread() + (bytesRead - bytesDone),
    inFlightBytes: inFlight,
    readBufferBytes: () => buffers.bytes,
    shipping: () => state() === "shipping",
  });

  const state = (): AgentState => {
    if (finalState) return finalState;
    if (fatal) return "failed";
    if (stopRequested) return "stopping";
    if (writer?.failure) return "checkpoint-failed";
    if (shipper?.stalled) return "kafka-retrying";
    return "shipping";
  };

  writer =
    checkpointFile === undefined
      ? undefined
      : new CheckpointWriter({
          path: checkpointFile,
          log,
          metrics,
          onHealth: (failure) => (failure ? shipper?.pause() : shipper?.resume()),
          minIntervalMs: CHECKPOINT_INTERVAL_MS,
        });

  let failDone: (error: AgentError) => void = () => undefined;
  const fatalPromise = new Promise<never>((_, reject) => {
    failDone = reject;
  });
  fatalPromise.catch(() => undefined);

  const activeShipper = new ShipBatches({
    sender,
    batchBytes: config.batchBytes,
    concurrency: config.sendConcurrency,
    lingerMs: config.lingerMs,
    log,
    metrics,
    onAcked: (batch: Batch) => {
      bytesDone += batch.bytes;
      metrics.bytesShipped.inc(batch.bytes);
      buffers.release(batch.readEnd);
      writer?.advance({
        version: 1,
        path: batch.file.path,
        dev: batch.file.dev,
        ino: batch.file.ino,
        offset: batch.end,
        fingerprint: batch.file.fingerprint(batch.end),
        mtimeMs: batch.file.openedMtimeMs,
      });
      wakeup.wake();
    },
    onFatal: (error) => {
      fatal = error;
      wakeup.wake();
      failDone(error);
    },
  });
  shipper = activeShipper;

  // What the line callback needs of the data event it comes from (set before each push: no closure per event).
  let eventFile: SourceFile | undefined;
  let eventReadBase = 0;
  /** CreateTime of the event's records: one BigInt per read, not per line. */
  let eventTimestamp = 0n;
  /**
   * What the last read's lines weighed per source byte (at least 1; records weigh their bytes): a read of short bad
   * lines adds far more weight than its bytes, so the next read is that much smaller. Only the first read of such a
   * stretch can pass the in-flight bound (by its dead letters' weight).
   */
  let weightPerByte = 1;
  const sourceHeader = enc(source.name);

  const deadLetter = (bytes: Buffer, start: number, verdict: DeadLetter, file: SourceFile) => {
    const { reason, error, redacted } = verdict;
    log.warn(
      { reason, source: source.name, fileId: file.id, offset: start, error, redacted: redacted?.fields },
      "dead-lettering a line",
    );
    const headers = new Map<Buffer, Buffer>([
      [HEADER_REASON, enc(reason)],
      [HEADER_SOURCE, sourceHeader],
      [HEADER_FILE_ID, enc(file.id)],
      [HEADER_OFFSET, enc(String(start))],
      [HEADER_LINE_ERROR, enc(error)],
    ]);
    if (redacted) headers.set(HEADER_REDACTED, enc(redacted.fields.join(",")));
    const value = redacted?.value ?? bytes;
    const message: KafkaMessage = { topic: config.dlqTopic, value, timestamp: eventTimestamp, headers };
    let weight = value.length + DEAD_LETTER_OVERHEAD;
    for (const [name, text] of headers) weight += name.length + text.length;
    return { message, weight };
  };

  /** One line of the current data event: classified, then added to a batch (or counted done when blank). */
  const onLine = (bytes: Buffer, start: number, end: number, tooLarge: boolean) => {
    const file = eventFile as SourceFile;
    const sourceBytes = end - start;
    const readEnd = eventReadBase + end;
    const verdict = classifyBytes(bytes, tooLarge);
    if (verdict.kind === "record") {
      // `partition` is the default partitioner's value for the key, kept per tenant (the sender takes it modulo
      // the partition count), so no record's key is hashed again.
      // CreateTime = when the agent ships it, not the record's `time`: the broker's time retention counts from the
      // timestamp, so a backlog older than the retention would be deleted before the writer read it.
      const message: KafkaMessage = {
        topic: config.topic,
        key: verdict.key,
        value: bytes,
        timestamp: eventTimestamp,
        partition: verdict.partition,
      };
      activeShipper.add(message, "record", sourceBytes, file, end, readEnd);
    } else if (verdict.kind === "blank") {
      bytesDone += sourceBytes;
      // Nothing waits for an acknowledgement: the buffers before this line are free now. Without this a long
      // stretch of blank lines held every buffer it was read into (no acknowledgement ever released them).
      if (inFlight() === 0) buffers.release(readEnd);
    } else {
      const { message, weight } = deadLetter(bytes, start, verdict, file);
      activeShipper.add(message, verdict.reason, sourceBytes, file, end, readEnd, weight);
    }
  };

  /** Ships the lines of a chunk read at `start` of `file`; `readBase` is the read position of the file's byte 0. */
  const ship = (bytes: Buffer, start: number, file: SourceFile, readBase: number) => {
    eventFile = file;
    eventReadBase = readBase;
    eventTimestamp = BigInt(Date.now());
    const before = activeShipper.inFlightBytes;
    metrics.linesRead.inc(splitter.push(bytes, start, onLine));
    // Pushing is synchronous: no acknowledgement lowered the count meanwhile.
    weightPerByte = Math.max(1, (activeShipper.inFlightBytes - before) / bytes.length);
  };

  /** The held partial line as the last line of `file` (it ended without a newline). */
  const shipLast = (line: SourceLine | undefined, file: SourceFile) => {
    if (!line) return;
    eventFile = file;
    eventReadBase = buffers.readPosition - line.end;
    eventTimestamp = BigInt(Date.now());
    metrics.linesRead.inc();
    onLine(line.bytes, line.start, line.end, line.tooLarge);
  };

  const readLoop = async (): Promise<"stopped" | "ended"> => {
    while (!stopRequested && !fatal) {
      const free = config.maxInFlightBytes - inFlight();
      if (free <= 0 || activeShipper.paused) {
        await Promise.race([activeShipper.changed(config.pollMs), wakeup.wait()]);
        continue;
      }
      // A change the file's watch reports while this read and its end-of-file checks run must not wait for the
      // next poll: the idle wait below returns at once when anything woke the loop since here.
      const wakes = wakeup.wakes;
      // A partial line's bytes are copied by the splitter: a line of many megabytes reuses one read buffer.
      const held = splitter.heldStart;
      buffers.copiedFrom(held === undefined ? Number.POSITIVE_INFINITY : eventReadBase + held);
      const event = await source.next(Math.max(1, Math.floor(free / weightPerByte)));
      switch (event.kind) {
        case "data":
          bytesRead += event.bytes.length;
          metrics.bytesRead.inc(event.bytes.length);
          // The read position of the file's byte 0 (for stdin, whose chunks are not ReadBuffers', it is unused).
          ship(event.bytes, event.start, event.file, buffers.readPosition - event.start - event.bytes.length);
          break;
        case "idle":
          if (readingToEnd && source.bytesUnread() === 0) readingToEnd.resolve();
          await wakeup.waitSince(wakes, config.pollMs);
          break;
        case "switched": {
          shipLast(splitter.flush(event.endOfOld), event.from);
          // A copy's switch to the path is the end of a copytruncate counted at "copied"; to a later copy, another one.
          if (event.reason !== "copytruncate" || event.generation) metrics.rotations.inc({ kind: event.reason });
          const { from, to, reason, generation } = event;
          log.info({ source: source.name, from: from.id, to: to.id, reason, generation }, "file rotated");
          break;
        }
        case "copied":
          metrics.rotations.inc({ kind: "copytruncate" });
          log.info(
            { source: source.name, fileId: event.from.id, copy: event.copy, offset: event.position },
            "file truncated; reading the rest of it from its copy",
          );
          break;
        case "truncated": {
          const lost = splitter.discard();
          bytesDone += lost;
          metrics.truncatedPartialBytes.inc(lost);
          metrics.rotations.inc({ kind: "truncate" });
          log.warn(
            { source: source.name, fileId: event.file.id, readUpTo: event.lostFrom, partialBytesDropped: lost },
            "file truncated; reading from its start",
          );
          break;
        }
        case "end": {
          shipLast(splitter.flush(event.position), event.file);
          return "ended";
        }
      }
    }
    return "stopped";
  };

  let server: { url: string; stop(): Promise<void> } | undefined;
  if (config.metricsPort !== undefined) {
    server = serveMetrics({
      host: config.metricsHost,
      port: config.metricsPort,
      registry: metrics.registry,
      health: () => {
        const current = state();
        const error = fatal ?? writer?.failure;
        return {
          healthy: current === "shipping",
          body: { status: current, ...(error ? { code: error.code, error: error.message } : {}) },
        };
      },
      listenError: (address, cause) =>
        new AgentError("AGENT_METRICS_LISTEN_FAILED", `cannot listen on ${address}: ${(cause as Error).message}`, {
          subject: address,
          cause,
        }),
    });
  }

  const closeAll = async () => {
    // After a failed drain (timeout, fatal error) the positions Kafka did acknowledge are still written: fewer
    // lines shipped twice at the next start. Bounded: a checkpoint that cannot be written does not hold the exit.
    if (writer !== undefined && writer.failure === undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        writer.settle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, FINAL_CHECKPOINT_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    writer?.stop();
    activeShipper.abort();
    await Promise.allSettled([sender.close(), producer.close(), source.close(), server?.stop()]);
  };

  /** Sends and checkpoints everything read, within the shutdown timeout. */
  const drain = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const unacked = `${activeShipper.inFlightBytes} bytes not acknowledged`;
        const lost = stdin
          ? `${unacked} are lost (standard input cannot be read again)`
          : `${unacked} are read again at the next start`;
        const blocked = writer?.failure;
        reject(
          new AgentError(
            "AGENT_SHUTDOWN_TIMEOUT",
            `shutdown did not finish within ${config.shutdownTimeoutMs} ms; ${lost}${blocked ? `; shipping was stopped by ${blocked.code}: ${blocked.message}` : ""}`,
            { subject: source.name, cause: blocked },
          ),
        );
      }, config.shutdownTimeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          await activeShipper.flush();
          await writer?.settle();
        })(),
        timeout,
        fatalPromise,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  log.info(
    {
      source: source.name,
      topic: config.topic,
      dlqTopic: config.dlqTopic,
      checkpoint: checkpoint ? { dev: checkpoint.dev, ino: checkpoint.ino, offset: checkpoint.offset } : null,
      metrics: server?.url,
    },
    "agent started",
  );

  let stopping: Promise<void> | undefined;
  const loop = readLoop();
  loop.catch(() => undefined);

  const done = (async () => {
    const ended = await Promise.race([loop, fatalPromise]);
    if (ended === "ended" && !stopRequested) {
      // Standard input ended by itself. A pipe cannot be read again, so what was read is sent however long Kafka
      // takes to come back; a signal meanwhile bounds the wait by the shutdown timeout (stop()).
      await Promise.race([activeShipper.flush(), fatalPromise]);
      if (fatal) throw fatal;
      if (!stopRequested) {
        finalState = "stopped";
        log.info(
          { bytesShipped: await AgentMetrics.valueOf(metrics.bytesShipped) },
          "standard input ended; everything read is acknowledged",
        );
        await closeAll();
        return;
      }
    }
    // Stopped on request: done once stop() has flushed and checkpointed (or failed to).
    if (fatal) throw fatal;
    return stopping;
  })();
  done.catch(async (error: unknown) => {
    finalState = "failed";
    log.error({ err: error }, "agent failed");
    await closeAll();
  });

  /** Reads on until the source has nothing unread (an idle read with no bytes left), for at most `stopReadMs`. */
  const readToEnd = async () => {
    const caughtUp = Promise.withResolvers<void>();
    readingToEnd = caughtUp;
    wakeup.wake();
    const timer = setTimeout(caughtUp.resolve, config.stopReadMs);
    // Caught up, out of time, or the loop ended by itself (a fatal error): what is left says which.
    await Promise.race([
      caughtUp.promise,
      loop.then(
        () => caughtUp.resolve(),
        () => caughtUp.resolve(),
      ),
    ]);
    clearTimeout(timer);
    readingToEnd = undefined;
    const unread = source.bytesUnread();
    if (unread > 0)
      log.warn({ unreadBytes: unread, stopReadMs: config.stopReadMs }, "stopping with bytes still unread");
    else log.info("stopping: everything in the file was read");
  };

  const stop = () => {
    stopping ??= (async () => {
      if (config.stopReadMs > 0 && !stdin && !fatal) await readToEnd();
      stopRequested = true;
      wakeup.wake();
      if (stdin) await source.close();
      try {
        await loop;
        await drain();
        finalState = "stopped";
        log.info({ bytesShipped: await AgentMetrics.valueOf(metrics.bytesShipped) }, "agent stopped");
      } catch (error) {
        finalState = "failed";
        throw error;
      } finally {
        await closeAll();
      }
    })();
    return stopping;
  };

  return {
    metrics,
    metricsUrl: server?.url,
    state,
    stop,
    done,
  };
}
