import { AuditEmitterError } from "./errors.ts";
import type { SinkTarget } from "./sink-target.ts";

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Batches JSONL lines into one write: lines queued while a write is in flight go out together in the next one, in
 * the order they were queued. One write at a time, so nothing is reordered; a line's promise settles when the
 * batch holding it was written (or failed). Queued plus in-flight bytes are bounded by `maxBufferedBytes`: past
 * it a line is refused at once (`AUDIT_EMITTER_BUFFER_FULL`) instead of growing memory without limit.
 */
export class JsonlSink {
  private queue: string[] = [];
  private queuedBytes = 0;
  private inFlightBytes = 0;
  private batch: Deferred | undefined;
  /** The promise of the newest batch: when it settles, every earlier batch has settled too. */
  private last: Promise<void> = Promise.resolve();
  private draining = false;
  private closed = false;

  constructor(
    private readonly target: SinkTarget,
    private readonly maxBufferedBytes: number,
  ) {}

  get name(): string {
    return this.target.name;
  }

  /** Bytes queued or being written. */
  get bufferedBytes(): number {
    return this.queuedBytes + this.inFlightBytes;
  }

  /** Queues one newline-terminated line; resolves once it is written. */
  write(line: string): Promise<void> {
    if (this.closed) {
      return Promise.reject(
        new AuditEmitterError("AUDIT_EMITTER_CLOSED", "audit sink is closed", { subject: this.name }),
      );
    }
    const bytes = Buffer.byteLength(line);
    if (this.queuedBytes + this.inFlightBytes + bytes > this.maxBufferedBytes) {
      return Promise.reject(
        new AuditEmitterError(
          "AUDIT_EMITTER_BUFFER_FULL",
          `audit sink buffer full (${this.bufferedBytes} of ${this.maxBufferedBytes} bytes waiting for ${this.name})`,
          { subject: this.name },
        ),
      );
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    if (!this.batch) {
      this.batch = deferred();
      this.batch.promise.catch(() => undefined); // settled for the writers; never an unhandled rejection
      this.last = this.batch.promise;
    }
    if (!this.draining) {
      this.draining = true;
      queueMicrotask(() => void this.drain());
    }
    return this.batch.promise;
  }

  /** Resolves when every line queued so far has been written or has failed. */
  async flush(): Promise<void> {
    await this.last.catch(() => undefined);
  }

  /** Reopens the file by its path before the next batch (SIGHUP after an external rotation). */
  reopen(): void {
    this.target.requestReopen();
  }

  /** Refuses new lines, writes what is queued, closes the target. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.target.close();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.batch) {
      const lines = this.queue;
      const done = this.batch;
      this.inFlightBytes = this.queuedBytes;
      this.queue = [];
      this.queuedBytes = 0;
      this.batch = undefined;
      try {
        await this.target.write(Buffer.from(lines.join("")));
        done.resolve();
      } catch (error) {
        done.reject(error);
      } finally {
        this.inFlightBytes = 0;
      }
    }
    this.draining = false;
  }
}
