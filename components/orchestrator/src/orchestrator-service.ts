import { type ServerUnaryCall, type sendUnaryData, status, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { answerUnary, grpcRefusal } from "@svc/component-runtime";
import type {
  AddComputeRequest,
  AddComputeResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  RemoveComputeRequest,
  RemoveComputeResponse,
} from "@svc/proto";
import type { PlacementStore } from "./placement-store.ts";

/** The term this replica leads under, once `recoverState()` finished; undefined otherwise. */
export type TermInOffice = () => number | undefined;

const NODE_ID = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function checkNodeId(nodeId: string): void {
  if (!NODE_ID.test(nodeId)) {
    throw grpcRefusal(status.INVALID_ARGUMENT, `node_id ${JSON.stringify(nodeId)} is not a DNS name`);
  }
}

/**
 * `svc.orchestrator.v1.OrchestratorService` (docs/components.md). Served behind the follower guard; the leader
 * answers `UNAVAILABLE` too until its `recoverState()` is done (no term in office yet), and every call is one
 * fenced transaction under that term.
 */
export function orchestratorImplementation(store: PlacementStore, termInOffice: TermInOffice) {
  const inOffice = (): number => {
    const term = termInOffice();
    if (term === undefined) {
      throw grpcRefusal(status.UNAVAILABLE, "orchestrator leader is still recovering its state");
    }
    return term;
  };
  const implementation = {
    addCompute(call: ServerUnaryCall<AddComputeRequest, AddComputeResponse>, done: sendUnaryData<AddComputeResponse>) {
      answerUnary(async () => {
        const { nodeId, address, podName, capacityShards } = call.request;
        checkNodeId(nodeId);
        if (capacityShards < 0) {
          throw grpcRefusal(status.INVALID_ARGUMENT, "capacity_shards must not be negative");
        }
        const assigned = await store.addCompute(inOffice(), {
          nodeId,
          address,
          podName: podName || nodeId,
          capacity: capacityShards,
        });
        return { accepted: true, assignedShards: assigned };
      }, done);
    },
    heartbeat(call: ServerUnaryCall<HeartbeatRequest, HeartbeatResponse>, done: sendUnaryData<HeartbeatResponse>) {
      answerUnary(async () => {
        checkNodeId(call.request.nodeId);
        const term = inOffice();
        const { registered, assigned } = await store.heartbeat(term, call.request.nodeId, call.request.loadedShards);
        return { registered, assignedShards: assigned, term };
      }, done);
    },
    removeCompute(
      call: ServerUnaryCall<RemoveComputeRequest, RemoveComputeResponse>,
      done: sendUnaryData<RemoveComputeResponse>,
    ) {
      answerUnary(async () => {
        checkNodeId(call.request.nodeId);
        const { removed, released } = await store.removeCompute(inOffice(), call.request.nodeId);
        return { removed, releasedShards: released };
      }, done);
    },
  };
  return implementation as unknown as UntypedServiceImplementation;
}
