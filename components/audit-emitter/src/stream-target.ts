import { AuditEmitterError } from "./errors.ts";
import type { SinkTarget } from "./sink-target.ts";

/** The part of a Node writable stream the target uses (process.stdout, a pipe, a socket). */
export interface WritableLike {
  write(chunk: Uint8Array, callback: (error?: Error | null) => void): boolean;
  on?(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * A stream such as stdout. A batch counts as written when the stream's write callback reports it flushed; the
 * stream is never closed (stdout belongs to the process) and rotation does not apply. One `write` per batch: no
 * other writer of the process may share the stream (the emitter's own logs go to stderr).
 */
export class StreamTarget implements SinkTarget {
  constructor(
    readonly name: string,
    private readonly stream: WritableLike,
  ) {
    // A failed write also emits 'error' on the stream; unheard, it would crash the process (a closed or full
    // stdout). The write callback carries the same error to the batch, which fails and is counted.
    stream.on?.("error", () => undefined);
  }

  requestReopen(): void {}

  write(chunk: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      try {
        this.stream.write(chunk, (error) => (error ? reject(this.failure(error)) : resolve()));
      } catch (error) {
        reject(this.failure(error));
      }
    });
  }

  async close(): Promise<void> {}

  private failure(cause: unknown): AuditEmitterError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new AuditEmitterError("AUDIT_EMITTER_WRITE_FAILED", `audit log write failed: ${reason}`, {
      subject: this.name,
      cause,
    });
  }
}

/** The process's stdout as a target. */
export const stdoutTarget = (): StreamTarget => new StreamTarget("stdout", process.stdout);
