import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { callUnary, type ServingReplicaClient } from "@svc/component-runtime";
import type { ShaperServiceClient } from "@svc/proto";
import type { Logger } from "pino";
import type { TaskStore } from "./task-store.ts";

/**
 * The backend leader's link to the shaper (spec: Leader-only duties, shaper): before jobs go out it makes sure
 * the serving shaper holds the keys of every loaded index. A shaper that restarted or took over (a new
 * `incarnation` in its Status, or fewer keys than the backend knows) is given all keys again. A job refused
 * because its key is missing marks the keys stale, so they are loaded again before the replay.
 */
export class ShaperLink {
  private loadedInto: string | undefined;

  constructor(
    private readonly shapers: ServingReplicaClient<ShaperServiceClient>,
    private readonly store: TaskStore,
    private readonly logger: Logger,
    private readonly jobTimeoutMs: number,
  ) {}

  /** Marks the keys stale (a new index, or a shaper that lost them). */
  invalidate(): void {
    this.loadedInto = undefined;
  }

  /** Loads the keys into the serving shaper when it does not hold them; rejects when no shaper serves. */
  async ensureKeys(): Promise<void> {
    const keys = await this.store.readyKeys();
    const current = await this.shapers.call((client) =>
      callUnary(client.status.bind(client), {}, new Metadata(), 2_000),
    );
    if (this.loadedInto === current.incarnation && current.keyCount === keys.length) return;
    const answer = await this.shapers.call((client) =>
      callUnary(client.loadKeys.bind(client), { keys }, new Metadata(), 5_000),
    );
    this.loadedInto = current.incarnation;
    this.logger.info(
      { event: "keys-reloaded", at: Date.now(), shaper: current.pod, keyCount: answer.keyCount },
      "keys of every loaded index reloaded into the shaper",
    );
  }

  /** Runs one job on the serving shaper; answers its recorded result. */
  async runJob(taskId: string, indexName: string, input: string): Promise<string> {
    try {
      const answer = await this.shapers.call((client) =>
        callUnary(client.runJob.bind(client), { taskId, indexName, input }, new Metadata(), this.jobTimeoutMs),
      );
      return answer.result;
    } catch (error) {
      if ((error as ServiceError).code === status.FAILED_PRECONDITION) this.invalidate();
      throw error;
    }
  }
}
