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
}

/**
 * Writes the newest acknowledged position, one write at a time (positions that arrive during a write are merged:
 * only the newest is written next). A failed write is retried with backoff until it succeeds; meanwhile the agent
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
    while (!this.#stopped && this.#latest !== this.#written) await this.#changed.wait(1_000);
  }

  stop(): void {
    this.#stopped = true;
    this.#changed.wake();
  }

  async #run(): Promise<void> {
    const { path, log, metrics, onHealth } = this.#options;
    let attempt = 0;
    try {
      while (!this.#stopped && this.#latest !== undefined && this.#latest !== this.#written) {
        const next = this.#latest;
        try {
          await writeCheckpoint(path, next);
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
