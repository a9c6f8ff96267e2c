import type { MessageToProduce, Producer } from "@platformatic/kafka";
import { backoffMs } from "@svc/common";
import type { Logger } from "pino";
import type { AgentMetrics } from "./agent-metrics.ts";
import type { DeadLetterReason } from "./classify-line.ts";
import type { AgentError } from "./errors.ts";
import { sendError } from "./kafka-send-error.ts";
import type { SourceFile } from "./source-file.ts";
import { Wakeup } from "./wakeup.ts";

export type KafkaMessage = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;

/**
 * One line on its way to Kafka: the message itself (handed to the producer as it is, no copy per record), with the
 * source position that becomes the checkpoint once it is acknowledged.
 */
export interface OutboundLine extends KafkaMessage {
  /** `record`, or the dead-letter reason. */
  kind: "record" | DeadLetterReason;
  file: SourceFile;
  /** Offset after the line's newline. */
  end: number;
  /** Source bytes the line took (newline included): what the in-flight bound counts. */
  sourceBytes: number;
}

interface Batch {
  lines: OutboundLine[];
  bytes: number;
  acked: boolean;
}

export interface ShipBatchesOptions {
  producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  batchBytes: number;
  /** Batches sent at once (each acknowledged separately; reported in reading order). */
  concurrency: number;
  lingerMs: number;
  log: Logger;
  metrics: AgentMetrics;
  /** Called after each acknowledged batch with its last line: the checkpoint may advance to it. */
  onAcked(last: OutboundLine, sourceBytes: number): void;
  /** A batch failed with an error that sending again cannot fix: shipping is over. */
  onFatal(error: AgentError): void;
}

/**
 * Collects lines into batches (up to `batchBytes`, or `lingerMs` after the oldest one arrived) and sends up to
 * `concurrency` batches at once with the idempotent producer (acks from all in-sync replicas). Acknowledgements
 * are reported in reading order, so the checkpoint never passes a line Kafka has not acknowledged. A batch that
 * fails is sent again with backoff while the error's `canRetry` holds (after a failure the client takes a new
 * producer id, so a batch retried behind a later one may land after it: order within a tenant is kept except
 * around a failure). Lines stay counted in flight until acknowledged, which bounds the reader's memory.
 */
export class ShipBatches {
  readonly #options: ShipBatchesOptions;
  readonly #changed = new Wakeup();
  #pending: OutboundLine[] = [];
  #pendingBytes = 0;
  #sendingBytes = 0;
  #oldestAt = 0;
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

  /** Source bytes of the lines added and not yet acknowledged. */
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

  add(line: OutboundLine): void {
    if (this.#pending.length === 0) this.#oldestAt = Date.now();
    this.#pending.push(line);
    this.#pendingBytes += line.sourceBytes;
    this.#schedule();
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
  }

  #ready(): boolean {
    if (this.#pending.length === 0 || this.#paused || this.#aborted) return false;
    return (
      this.#flushing ||
      this.#pendingBytes >= this.#options.batchBytes ||
      Date.now() - this.#oldestAt >= this.#options.lingerMs
    );
  }

  #schedule(): void {
    if (this.#ready()) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      while (this.#sending.length < this.#options.concurrency && this.#ready()) this.#start(this.#take());
      return;
    }
    if (this.#timer === undefined && this.#pending.length > 0 && !this.#paused && !this.#aborted) {
      const wait = Math.max(0, this.#options.lingerMs - (Date.now() - this.#oldestAt));
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#schedule();
      }, wait);
    }
  }

  #take(): Batch {
    let bytes = 0;
    let count = 0;
    while (count < this.#pending.length && (count === 0 || bytes < this.#options.batchBytes)) {
      bytes += (this.#pending[count] as OutboundLine).sourceBytes;
      count += 1;
    }
    const lines = this.#pending.splice(0, count);
    this.#pendingBytes -= bytes;
    this.#sendingBytes += bytes;
    if (this.#pending.length > 0) this.#oldestAt = Date.now();
    return { lines, bytes, acked: false };
  }

  #start(batch: Batch): void {
    this.#sending.push(batch);
    void this.#sendWithRetry(batch.lines).then((sent) => {
      if (!sent) return;
      batch.acked = true;
      this.#settleInOrder();
    });
  }

  /** Reports acknowledged batches in the order they were read: the checkpoint never passes an unacknowledged line. */
  #settleInOrder(): void {
    while (this.#sending[0]?.acked) {
      const batch = this.#sending.shift() as Batch;
      this.#sendingBytes -= batch.bytes;
      this.#count(batch.lines);
      this.#options.onAcked(batch.lines[batch.lines.length - 1] as OutboundLine, batch.bytes);
    }
    this.#changed.wake();
    if (!this.#aborted) this.#schedule();
  }

  #count(batch: OutboundLine[]): void {
    let records = 0;
    const dead = new Map<DeadLetterReason, number>();
    for (const line of batch) {
      if (line.kind === "record") records += 1;
      else dead.set(line.kind, (dead.get(line.kind) ?? 0) + 1);
    }
    const { metrics } = this.#options;
    metrics.recordsShipped.inc(records);
    for (const [reason, n] of dead) metrics.deadLettered.inc({ reason }, n);
  }

  /** True once Kafka acknowledged the batch; false when aborted or failed for good (then lines stay unacked). */
  async #sendWithRetry(batch: OutboundLine[]): Promise<boolean> {
    const { producer, log, metrics } = this.#options;
    const messages = batch;
    let retrying = false;
    try {
      for (let attempt = 0; ; attempt += 1) {
        if (this.#aborted) return false;
        try {
          await producer.send({ messages });
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
            { err: error, code: error.code, attempt, delayMs: delay, records: batch.length },
            "send failed; retrying",
          );
          await this.#changed.wait(delay);
        }
      }
    } finally {
      if (retrying) this.#retrying -= 1;
    }
  }
}
