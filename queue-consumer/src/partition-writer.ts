import type { BatchBody } from "./batch-body.ts";
import { batchWindowEnd } from "./batch-window.ts";
import { QueueConsumerError } from "./errors.ts";
import { type ClosedBatch, PartitionBatch } from "./partition-batch.ts";

/** Writes one closed batch durably (PUT, index, commit); rejects with `QUEUE_CONSUMER_ABORTED` once `signal` aborts. */
export type WriteBatch = (batch: ClosedBatch, signal: AbortSignal) => Promise<void>;

export interface PartitionWriterHooks {
  write: WriteBatch;
  /** Bytes that left the buffer: committed, or dropped uncommitted. */
  release(bytes: number): void;
  /** A batch could not be written and cannot be retried: the consumer stops, nothing of it is committed. */
  fail(error: unknown): void;
  dropped(batches: number): void;
}

/**
 * One assigned partition: its open batch and the sealed batches waiting to be written, written one at a time and
 * in offset order, so a partition's offsets are committed in order. Records below the next expected offset are
 * skipped: after a rebalance the stream fetches a kept partition again from its committed offset.
 */
export class PartitionWriter {
  private open: PartitionBatch;
  private readonly queue: ClosedBatch[] = [];
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  /** Offset of the next record this writer takes; -1 until the first one. */
  private nextOffset = -1n;
  /** Bytes held (open and queued), for the buffer account. */
  private held = 0;

  /** `newBody`: where each batch's bytes go (a spool file, or the heap). */
  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly hooks: PartitionWriterHooks,
    private readonly newBody: () => BatchBody,
  ) {
    this.open = new PartitionBatch(topic, partition, newBody());
  }

  get revoked(): boolean {
    return this.abort.signal.aborted;
  }

  /**
   * Adds a record; returns the bytes it adds to the buffer (0 when skipped as already taken). When the batch's spool
   * file cannot be written (`QUEUE_CONSUMER_SPOOL_FAILED`) the record is not taken, the writer fails (`hooks.fail`)
   * and is revoked: nothing of it was committed.
   */
  add(value: Buffer, offset: bigint, timestampMs: number, now: number): number {
    if (this.revoked || offset < this.nextOffset) return 0;
    try {
      this.open.add(value, offset, timestampMs, now);
    } catch (error) {
      this.failWith(error);
      return 0;
    }
    this.nextOffset = offset + 1n;
    const bytes = value.length + 1;
    this.held += bytes;
    return bytes;
  }

  isFull(limits: { maxBytes: number; maxRecords: number }): boolean {
    return this.open.isFull(limits);
  }

  /**
   * When the open batch is due: the end of its `maxAgeMs` window (`batchWindowEnd`); undefined when none is open
   * (or the partition was revoked).
   */
  dueAt(maxAgeMs: number): number | undefined {
    if (this.revoked || this.open.size === 0) return undefined;
    return batchWindowEnd(this.open.openedAt, maxAgeMs, this.partition);
  }

  /** Records in the open batch. */
  get openRecords(): number {
    return this.open.size;
  }

  /** Closes the open batch (if any) and starts writing it after the ones before it. */
  seal(): void {
    if (this.revoked || this.open.size === 0) return;
    const open = this.open;
    this.open = new PartitionBatch(this.topic, this.partition, this.newBody());
    let closed: ClosedBatch;
    try {
      closed = open.close();
    } catch (error) {
      open.discard();
      this.hooks.dropped(1);
      this.failWith(error);
      return;
    }
    this.queue.push(closed);
    this.startDrain();
  }

  /**
   * Writes the queue unless a drain runs. A batch sealed in the moment between a drain's end and its `finally`
   * would otherwise wait for the partition's next seal: the drain starts again when it finds one queued.
   */
  private startDrain(): void {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length > 0 && !this.revoked) this.startDrain();
    });
  }

  /** Resolves when nothing is being written (every sealed batch committed, or the writer revoked). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  get pendingBatches(): number {
    return this.queue.length + (this.open.size > 0 ? 1 : 0);
  }

  /**
   * Stops the writer: the open batch and the batches not yet committed are dropped (the partition's next owner, or
   * this consumer's next session, reads them again from the committed offset), and a write in progress stops at its
   * next retry.
   */
  revoke(): void {
    if (this.revoked) return;
    this.abort.abort();
    const dropped = this.queue.length + (this.open.size > 0 ? 1 : 0);
    for (const batch of this.queue) batch.body.discard();
    this.queue.length = 0;
    this.open.discard();
    this.open = new PartitionBatch(this.topic, this.partition, this.newBody());
    if (dropped > 0) this.hooks.dropped(dropped);
    this.hooks.release(this.held);
    this.held = 0;
  }

  /** A batch cannot be kept or written: the consumer stops (nothing of it committed) and this writer lets go. */
  private failWith(error: unknown): void {
    this.hooks.fail(error);
    this.revoke();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const batch = this.queue[0];
      if (batch === undefined || this.revoked) return;
      try {
        await this.hooks.write(batch, this.abort.signal);
      } catch (error) {
        if (error instanceof QueueConsumerError && error.code === "QUEUE_CONSUMER_ABORTED") return;
        if (this.revoked) return;
        this.failWith(error);
        return;
      }
      if (this.revoked) return;
      this.queue.shift();
      batch.body.discard();
      this.held -= batch.body.length;
      this.hooks.release(batch.body.length);
    }
  }
}
