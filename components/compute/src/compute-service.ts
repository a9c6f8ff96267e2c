import type { ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { ListShardsRequest, ListShardsResponse } from "@svc/proto";
import type { ShardHolder } from "./shard-holder.ts";

/** `svc.compute.v1.ComputeService`: what this replica holds (served behind the follower guard). */
export function computeImplementation(nodeId: string, holder: ShardHolder): UntypedServiceImplementation {
  const implementation = {
    listShards(_call: ServerUnaryCall<ListShardsRequest, ListShardsResponse>, done: sendUnaryData<ListShardsResponse>) {
      done(null, {
        nodeId,
        shards: holder.list().map((s) => ({ shardId: s.shardId, sizeBytes: s.sizeBytes, sha256: s.sha256 })),
      });
    },
  };
  return implementation as unknown as UntypedServiceImplementation;
}
