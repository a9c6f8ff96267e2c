import { backoffMs } from "@svc/common";
import type { Logger } from "pino";
import type { AgentMetrics } from "./agent-metrics.ts";
import { type Checkpoint, writeCheckpoint } from "./checkpoint-file.ts";
import type { AgentError } from "./errors.ts";
import { Wakeup } from "./wakeup.ts";

export interface CheckpointWriterOptions {
  path: string;
  log: Logger;
  metrics: AgentMetrics;
  /** Called with the error when writes start failing, and with undefined when one succeeds again. */
  onHealth(failure: AgentError | undefined): void;
  /** Least time between two writes (a write opens, syncs and renames: its cost is per write, not per line). */
  minIntervalMs: number;
}

/**
 * Writes the newest acknowledged position, one write at a time and at most one per `minIntervalMs` (positions that
 * arrive meanwhile are merged: only the newest is written next; `settle()` writes it without waiting). A failed write is retried with backoff until it succeeds; meanwhile the agent
 * does not ship (`onHealth`), so nothing is acknowledged that a checkpoint could not record.
 */
export class CheckpointWriter {
  readonly #options: CheckpointWriterOptions;
  readonly #changed = new Wakeup();
  #latest: Checkpoint | undefined;
  #written: Checkpoint | undefined;
  #running = false;
  #failure: AgentError | undefined;
  #stopped = false;
  /** A caller waits in settle(): the next write does not wait for the interval. */
  #settling = false;
  /** When the last write succeeded (the next one waits for `minIntervalMs` after it). */
  #writtenAt = 0;

  constructor(options: CheckpointWriterOptions) {
    this.#options = options;
  }

  get failure(): AgentError | undefined {
    return this.#failure;
  }

  advance(checkpoint: Checkpoint): void {
    this.#latest = checkpoint;
    if (!this.#running) {
      this.#running = true;
      void this.#run();
    }
  }

  /** Resolves once the newest position is written (or the writer was stopped). */
  async settle(): Promise<void> {
    this.#settling = true;
    this.#changed.wake();
    try {
      while (!this.#stopped && this.#latest !== this.#written) await this.#changed.wait(1_000);
    } finally {
      this.#settling = false;
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#changed.wake();
  }

  async #run(): Promise<void> {
    const { path, log, metrics, onHealth, minIntervalMs } = this.#options;
    let attempt = 0;
    try {
      while (!this.#stopped && this.#latest !== undefined && this.#latest !== this.#written) {
        const wait = this.#writtenAt + minIntervalMs - Date.now();
        if (wait > 0 && !this.#settling) {
          await this.#changed.wait(wait);
          continue;
        }
        const next = this.#latest;
        try {
          await writeCheckpoint(path, next);
          this.#writtenAt = Date.now();
          this.#written = next;
          metrics.checkpointsWritten.inc();
          attempt = 0;
          if (this.#failure) {
            log.info({ checkpoint: path }, "checkpoint written again; shipping resumes");
            this.#failure = undefined;
            onHealth(undefined);
          }
          this.#changed.wake();
        } catch (cause) {
          const error = cause as AgentError;
          metrics.checkpointFailures.inc();
          if (!this.#failure) {
            log.error(
              { err: error, code: error.code, checkpoint: path },
              "cannot write the checkpoint; shipping stops",
            );
            this.#failure = error;
            onHealth(error);
          }
          await this.#changed.wait(backoffMs(attempt, 2_000));
          attempt += 1;
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
