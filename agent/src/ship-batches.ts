import { backoffMs } from "@svc/common";
import type { Logger } from "pino";
import type { AgentMetrics } from "./agent-metrics.ts";
import type { DeadLetterReason } from "./classify-line.ts";
import type { AgentError } from "./errors.ts";
import { sendError } from "./kafka-send-error.ts";
import type { BatchMessage } from "./record-batch.ts";
import type { RecordSender } from "./record-sender.ts";
import type { SourceFile } from "./source-file.ts";
import { Wakeup } from "./wakeup.ts";

/** A message to produce: a record batch's record (`record-batch.ts`) and where it goes. */
export interface KafkaMessage extends BatchMessage {
  readonly topic: string;
  /** Taken modulo the topic's partition count; without one, round robin. */
  readonly partition?: number;
}

/**
 * Lines sent as one produce request. What is known per line is only its message (handed to the producer as it is,
 * its value a view of the read buffer); the rest is kept per batch: the source position its last line ends at (the
 * checkpoint once it is acknowledged) and what it holds, for the metrics.
 */
export interface Batch {
  readonly messages: KafkaMessage[];
  /** Source bytes of its lines (newlines included): what the checkpoint and the shipped-bytes counter count. */
  bytes: number;
  /**
   * What its messages weigh: their source bytes, plus a dead letter's headers and objects (a short bad line costs
   * far more than its bytes). The batch size and the in-flight bound count this.
   */
  weight: number;
  records: number;
  /** Dead-lettered lines by reason; undefined while there is none. */
  dead: Map<DeadLetterReason, number> | undefined;
  /** The file of its last line and the offset after that line's newline. */
  file: SourceFile;
  end: number;
  /** Read position (bytes read since start, over every file) after its last line: see `ReadBuffers.release`. */
  readEnd: number;
  /** When its first line arrived (the linger time counts from it). */
  readonly openedAt: number;
  acked: boolean;
}

export interface ShipBatchesOptions {
  sender: RecordSender;
  batchBytes: number;
  /** Batches sent at once (each acknowledged separately; reported in reading order). */
  concurrency: number;
  lingerMs: number;
  log: Logger;
  metrics: AgentMetrics;
  /** Called after each acknowledged batch, in reading order: the checkpoint may advance to its end. */
  onAcked(batch: Batch): void;
  /** A batch failed with an error that sending again cannot fix: shipping is over. */
  onFatal(error: AgentError): void;
}

/**
 * Collects lines into batches (up to `batchBytes`, or `lingerMs` after the oldest one arrived) and sends up to
 * `concurrency` batches at once with the idempotent producer (acks from all in-sync replicas). Acknowledgements
 * are reported in reading order, so the checkpoint never passes a line Kafka has not acknowledged. A batch that
 * fails is sent again with backoff while the error's `canRetry` holds (after a failure the sender takes a new
 * producer id, so a batch retried behind a later one may land after it: order within a tenant is kept except
 * around a failure). Lines stay counted in flight until acknowledged, which bounds the reader's memory.
 */
export class ShipBatches {
  readonly #options: ShipBatchesOptions;
  readonly #changed = new Wakeup();
  /** Woken by abort() only: a retry's backoff is not cut short by the other batches' acknowledgements. */
  readonly #aborting = new Wakeup();
  /** The batch lines are added to; full batches wait in #full for a send slot. */
  #open: Batch | undefined;
  #full: Batch[] = [];
  #pendingBytes = 0;
  #sendingBytes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Batches sent and not yet reported acknowledged, in reading order. */
  #sending: Batch[] = [];
  #paused = false;
  #flushing = false;
  #aborted = false;
  /** Batches being sent again after a failure. */
  #retrying = 0;

  constructor(options: ShipBatchesOptions) {
    this.#options = options;
  }

  /** Weight (source bytes, and dead letters' headers) of the lines added and not yet acknowledged. */
  get inFlightBytes(): number {
    return this.#pendingBytes + this.#sendingBytes;
  }

  /** True while shipping is stopped (paused by a failing checkpoint) or a batch is being retried. */
  get stalled(): boolean {
    return this.#paused || this.#retrying > 0;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Resolves at the next acknowledgement, pause change or abort (or after `timeoutMs`). */
  changed(timeoutMs?: number): Promise<void> {
    return this.#changed.wait(timeoutMs);
  }

  /**
   * Adds one line: its message, `record` or the reason it is dead-lettered, the source bytes it took (newline
   * included), where it ends (file, offset after its newline, read position) and what its message weighs (its
   * source bytes for a record).
   */
  add(
    message: KafkaMessage,
    kind: "record" | DeadLetterReason,
    sourceBytes: number,
    file: SourceFile,
    end: number,
    readEnd: number,
    weight: number = sourceBytes,
  ): void {
    let batch = this.#open;
    const opened = batch === undefined;
    if (batch === undefined) {
      batch = {
        messages: [],
        bytes: 0,
        weight: 0,
        records: 0,
        dead: undefined,
        file,
        end,
        readEnd,
        openedAt: Date.now(),
        acked: false,
      };
      this.#open = batch;
    }
    batch.messages.push(message);
    batch.bytes += sourceBytes;
    batch.weight += weight;
    if (kind === "record") batch.records += 1;
    else {
      batch.dead ??= new Map();
      batch.dead.set(kind, (batch.dead.get(kind) ?? 0) + 1);
    }
    batch.file = file;
    batch.end = end;
    batch.readEnd = readEnd;
    this.#pendingBytes += weight;
    if (batch.weight >= this.#options.batchBytes) {
      this.#full.push(batch);
      this.#open = undefined;
      this.#schedule();
    } else if (opened) {
      this.#schedule(); // arms the linger timer
    }
  }

  /** Stops starting new batches (a batch being sent still finishes). */
  pause(): void {
    this.#paused = true;
    this.#changed.wake();
  }

  resume(): void {
    this.#paused = false;
    this.#changed.wake();
    this.#schedule();
  }

  /** Sends everything pending, ignoring the linger time; resolves when all of it is acknowledged. */
  async flush(): Promise<void> {
    this.#flushing = true;
    this.#schedule();
    while (this.inFlightBytes > 0 && !this.#aborted) await this.#changed.wait(1_000);
  }

  /** Gives up: nothing more is sent or retried; lines not acknowledged stay behind the checkpoint. */
  abort(): void {
    this.#aborted = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#changed.wake();
    this.#aborting.wake();
  }

  /** The next batch to send now, or undefined: a full one, else the open one once its linger time passed. */
  #next(): Batch | undefined {
    if (this.#paused || this.#aborted) return undefined;
    if (this.#full.length > 0) return this.#full.shift();
    const open = this.#open;
    if (open === undefined) return undefined;
    if (!this.#flushing && Date.now() - open.openedAt < this.#options.lingerMs) return undefined;
    this.#open = undefined;
    return open;
  }

  #schedule(): void {
    while (this.#sending.length < this.#options.concurrency) {
      const batch = this.#next();
      if (batch === undefined) break;
      this.#start(batch);
    }
    const open = this.#open;
    // With every slot taken, the next acknowledgement schedules again; paused, resume() does.
    const idle = this.#sending.length >= this.#options.concurrency || this.#paused || this.#aborted;
    if (open === undefined || idle) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#timer === undefined) {
      const wait = Math.max(0, this.#options.lingerMs - (Date.now() - open.openedAt));
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#schedule();
      }, wait);
    }
  }

  #start(batch: Batch): void {
    this.#pendingBytes -= batch.weight;
    this.#sendingBytes += batch.weight;
    this.#sending.push(batch);
    void this.#sendWithRetry(batch.messages).then((sent) => {
      if (!sent) return;
      batch.acked = true;
      this.#settleInOrder();
    });
  }

  /** Reports acknowledged batches in the order they were read: the checkpoint never passes an unacknowledged line. */
  #settleInOrder(): void {
    const { metrics } = this.#options;
    while (this.#sending[0]?.acked) {
      const batch = this.#sending.shift() as Batch;
      this.#sendingBytes -= batch.weight;
      metrics.recordsShipped.inc(batch.records);
      if (batch.dead) for (const [reason, n] of batch.dead) metrics.deadLettered.inc({ reason }, n);
      this.#options.onAcked(batch);
    }
    this.#changed.wake();
    if (!this.#aborted) this.#schedule();
  }

  /** True once Kafka acknowledged the batch; false when aborted or failed for good (then lines stay unacked). */
  async #sendWithRetry(messages: KafkaMessage[]): Promise<boolean> {
    const { sender, log, metrics } = this.#options;
    let retrying = false;
    try {
      for (let attempt = 0; ; attempt += 1) {
        if (this.#aborted) return false;
        try {
          await sender.send(messages);
          if (retrying) log.info({ attempt }, "Kafka acknowledged again; shipping resumed");
          return true;
        } catch (cause) {
          const error = sendError(cause, messages[0]?.topic ?? "");
          if (this.#aborted) return false;
          if (!error.canRetry) {
            log.error({ err: error, code: error.code }, "Kafka refused a batch for good; shipping stops");
            this.#aborted = true;
            this.#changed.wake();
            this.#options.onFatal(error);
            return false;
          }
          if (!retrying) this.#retrying += 1;
          retrying = true;
          metrics.sendRetries.inc();
          const delay = backoffMs(attempt);
          log.warn(
            { err: error, code: error.code, attempt, delayMs: delay, records: messages.length },
            "send failed; retrying",
          );
          await this.#aborting.wait(delay);
        }
      }
    } finally {
      if (retrying) this.#retrying -= 1;
    }
  }
}
