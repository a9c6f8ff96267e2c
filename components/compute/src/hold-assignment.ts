import { Metadata } from "@grpc/grpc-js";
import { abortableSleep, callUnary, type ServingReplicaClient } from "@svc/component-runtime";
import type { OrchestratorServiceClient } from "@svc/proto";
import type { Logger } from "pino";
import type { ShardHolder } from "./shard-holder.ts";

export interface HoldAssignmentOptions {
  orchestrator: ServingReplicaClient<OrchestratorServiceClient>;
  holder: ShardHolder;
  logger: Logger;
  nodeId: string;
  /** Where the orchestrator reaches this replica. */
  address: string;
  capacityShards: number;
  heartbeatMs: number;
  signal: AbortSignal;
  /** The compute leader this replica took over from (its lease expired): deregistered at once. */
  previousLeader?: string;
}

/** Pause between two calls while no orchestrator replica answers. */
const RETRY_MS = 200;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * What a serving compute replica does (spec: Leader-only duties, compute): registers with `AddCompute`, then
 * heart-beats with the shards it holds, loading what it is assigned from object storage and dropping the rest. A
 * heartbeat answered `registered: false` (marked lost meanwhile) registers again; an orchestrator failover shows as
 * `RUNTIME_NO_LEADER` and is tried again a heartbeat later. When the work ends (graceful stop, leadership lost) it
 * deregisters, best effort, so its shards move at once instead of after the node timeout.
 */
export async function holdAssignment(options: HoldAssignmentOptions): Promise<void> {
  const { orchestrator, holder, logger, nodeId, signal } = options;
  const deadlineMs = Math.max(1_000, options.heartbeatMs);
  let registered = false;
  let reported = "";
  const previous = options.previousLeader;
  if (previous && previous !== nodeId) {
    // Its lease expired, so it stopped serving by its renew deadline: its shards can move now rather than after
    // the orchestrator's node timeout (spec: after promotion the orchestrator reassigns them onto this replica).
    await orchestrator
      .call((client) =>
        callUnary(
          client.removeCompute.bind(client),
          { nodeId: previous, reason: `lease taken over by ${nodeId}` },
          new Metadata(),
          deadlineMs,
        ),
      )
      .then(
        (answer) =>
          logger.info({ event: "took-over", from: previous, released: answer.releasedShards.length }, "took over"),
        (error: unknown) =>
          logger.warn({ err: messageOf(error), from: previous }, "RemoveCompute of the old leader failed"),
      );
  }
  while (!signal.aborted) {
    let changed = false;
    let failed = false;
    try {
      let assigned: string[];
      if (!registered) {
        const answer = await orchestrator.call((client) =>
          callUnary(
            client.addCompute.bind(client),
            { nodeId, address: options.address, podName: nodeId, capacityShards: options.capacityShards },
            new Metadata(),
            deadlineMs,
          ),
        );
        registered = answer.accepted;
        assigned = answer.assignedShards;
        logger.info({ event: "registered", at: Date.now(), assigned: assigned.length }, "registered with AddCompute");
      } else {
        const answer = await orchestrator.call((client) =>
          callUnary(client.heartbeat.bind(client), { nodeId, loadedShards: holder.ids() }, new Metadata(), deadlineMs),
        );
        if (!answer.registered) {
          registered = false;
          logger.warn({ event: "unregistered" }, "orchestrator no longer knows this node; registering again");
          continue;
        }
        assigned = answer.assignedShards;
      }
      const before = holder.ids().join(",");
      const failures = await holder.sync(assigned);
      for (const failure of failures) {
        logger.warn(
          { event: "load-failed", code: failure.code, shard: failure.subject, err: failure.message },
          "shard not loaded",
        );
      }
      const now = holder.ids().join(",");
      changed = now !== before;
      if (now !== reported && changed) {
        logger.info({ event: "shards", at: Date.now(), shards: holder.ids() }, "holding shards");
        reported = now;
      }
    } catch (error) {
      failed = true;
      logger.warn({ err: messageOf(error) }, "orchestrator call failed");
    }
    // A change is reported at once; while no orchestrator answers (a failover), it is asked again every
    // RETRY_MS so the new leader's assignment arrives soon after it takes office; otherwise one period later.
    if (!changed) await abortableSleep(failed ? Math.min(RETRY_MS, options.heartbeatMs) : options.heartbeatMs, signal);
  }
  holder.clear();
  if (registered) {
    await orchestrator
      .call((client) =>
        callUnary(client.removeCompute.bind(client), { nodeId, reason: "stopped serving" }, new Metadata(), 1_000),
      )
      .catch((error: unknown) => logger.warn({ err: messageOf(error) }, "RemoveCompute failed"));
  }
}
