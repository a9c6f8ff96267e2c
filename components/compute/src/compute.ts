import { S3Client } from "@aws-sdk/client-s3";
import { credentials } from "@grpc/grpc-js";
import { type Replica, ServingReplicaClient, startComponentAuth, startReplica } from "@svc/component-runtime";
import { ComputeServiceService, OrchestratorServiceClient } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import { computeImplementation } from "./compute-service.ts";
import type { ComputeConfig } from "./config.ts";
import { holdAssignment } from "./hold-assignment.ts";
import { COMPUTE } from "./profile.ts";
import { ShardHolder } from "./shard-holder.ts";

/**
 * Starts one compute replica: its auth, the shard holder (PostgreSQL records, S3 objects), the orchestrator client,
 * the runtime.
 */
export async function startCompute(config: ComputeConfig, logger: Logger): Promise<Replica> {
  const auth = await startComponentAuth(config.replica, logger);
  const sql = new SQL({ url: config.pgUrl, max: 2, connectionTimeout: 5 });
  const s3 = new S3Client({
    endpoint: config.s3.endpoint,
    region: config.s3.region,
    credentials: config.s3.credentials,
    forcePathStyle: config.s3.forcePathStyle,
  });
  const holder = new ShardHolder(sql, config.schema, s3, config.s3.bucket, config.loadTimeoutMs);
  const orchestrator = new ServingReplicaClient(
    "orchestrator",
    config.orchestratorAddresses,
    (address) => new OrchestratorServiceClient(address, credentials.createInsecure(), auth.clientOptions),
  );
  const close = async () => {
    orchestrator.close();
    auth.close();
    s3.destroy();
    await sql.close({ timeout: 1 });
  };
  return startReplica({
    profile: COMPUTE,
    config: config.replica,
    logger,
    services: [
      {
        name: "svc.compute.v1.ComputeService",
        definition: ComputeServiceService,
        implementation: auth.guard(ComputeServiceService, computeImplementation(config.replica.pod, holder)),
      },
    ],
    whileServing: ({ signal, address, previousLeader }) =>
      holdAssignment({
        orchestrator,
        holder,
        logger,
        nodeId: config.replica.pod,
        address,
        previousLeader,
        capacityShards: config.capacityShards,
        heartbeatMs: config.heartbeatMs,
        signal,
      }),
    close,
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
}
