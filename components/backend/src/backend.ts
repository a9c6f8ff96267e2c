import { S3Client } from "@aws-sdk/client-s3";
import { credentials } from "@grpc/grpc-js";
import {
  ensureModelTables,
  type Replica,
  ServingReplicaClient,
  startComponentAuth,
  startReplica,
  TermFence,
} from "@svc/component-runtime";
import { BackendServiceService, ShaperServiceClient } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import { backendImplementation } from "./backend-service.ts";
import type { BackendConfig } from "./config.ts";
import { runLeaderDuties } from "./leader-duties.ts";
import { BACKEND } from "./profile.ts";
import { ShaperLink } from "./shaper-link.ts";
import { TaskStore } from "./task-store.ts";

/** Starts one backend replica: its auth, the model's tables, the task store, the shaper link, the replica runtime. */
export async function startBackend(config: BackendConfig, logger: Logger): Promise<Replica> {
  const auth = await startComponentAuth(config.replica, logger);
  const sql = new SQL({ url: config.pgUrl, max: 6, connectionTimeout: 5 });
  const s3 = new S3Client({
    endpoint: config.s3.endpoint,
    region: config.s3.region,
    credentials: config.s3.credentials,
    forcePathStyle: config.s3.forcePathStyle,
  });
  const shapers = new ServingReplicaClient(
    "shaper",
    config.shaperAddresses,
    (address) => new ShaperServiceClient(address, credentials.createInsecure(), auth.clientOptions),
  );
  const close = async () => {
    shapers.close();
    auth.close();
    s3.destroy();
    await sql.close({ timeout: 1 });
  };
  try {
    await ensureModelTables(sql, config.schema);
  } catch (error) {
    await close();
    throw error;
  }
  const fence = new TermFence({
    sql,
    schema: config.schema,
    component: BACKEND.name,
    stallTimeoutMs: config.replica.timings.renewDeadlineSeconds * 1000,
  });
  const store = new TaskStore(sql, config.schema, fence);
  const shaper = new ShaperLink(shapers, store, logger, config.jobTimeoutMs);
  let termInOffice: number | undefined;
  const objects = { s3, bucket: config.s3.bucket, prefix: config.s3.prefix };
  return startReplica({
    profile: BACKEND,
    config: config.replica,
    logger,
    services: [
      {
        name: "svc.backend.v1.BackendService",
        definition: BackendServiceService,
        implementation: auth.guard(
          BackendServiceService,
          backendImplementation({ store, shaper, ...objects, termInOffice: () => termInOffice }),
        ),
      },
    ],
    whileServing: ({ term, signal }) =>
      runLeaderDuties({
        store,
        shaper,
        ...objects,
        logger,
        pod: config.replica.pod,
        term,
        signal,
        tickMs: config.tickMs,
        maxRunning: config.maxRunning,
        taskRetentionMs: config.taskRetentionMs,
        inOffice: (term) => {
          termInOffice = term;
        },
      }),
    close,
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
}
