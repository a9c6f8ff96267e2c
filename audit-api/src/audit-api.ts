import { S3Client } from "@aws-sdk/client-s3";
import { Server } from "@grpc/grpc-js";
import { createAuthCore } from "@svc/auth";
import { bindGrpcServer, type RunnableService, stopGrpcServer } from "@svc/common";
import { grpcHealth, HealthState } from "@svc/health";
import { HealthService } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import { AuditQueries } from "./audit-queries.ts";
import { BLOCK_BYTES, BlockCache } from "./block-cache.ts";
import type { AuditApiConfig } from "./config.ts";
import { DiskBlocks } from "./disk-blocks.ts";
import { AuditApiError } from "./errors.ts";
import { addReflection } from "./grpc-reflection.ts";
import { AuditServiceService, auditServiceImplementation } from "./grpc-service.ts";
import { IndexReader } from "./index-reader.ts";
import { KafkaTail } from "./kafka-tail.ts";
import { PageTokens } from "./page-token.ts";
import { restApp } from "./rest-app.ts";
import { RollupSums } from "./rollup-sums.ts";
import type { TailStore } from "./tail-store.ts";
import { VersionReader } from "./version-reader.ts";

export interface AuditApi extends RunnableService {
  /** The bound ports (useful with port 0). */
  readonly grpcPort: number;
  readonly restPort: number;
  readonly queries: AuditQueries;
  /** The freshness tail's records (undefined without SVC_AUDIT_KAFKA_BROKERS). */
  readonly tail: TailStore | undefined;
}

/**
 * Starts the audit API: the auth start-up check, the index (PostgreSQL) and object (S3) clients, the gRPC server
 * (plaintext, spec: the shown deployment) and the REST + health server.
 */
export async function startAuditApi(config: AuditApiConfig, options: { logger: Logger }): Promise<AuditApi> {
  const { logger } = options;
  const auth = createAuthCore({ config: config.auth, logger });
  await auth.start();
  // Opened before the clients below: a directory that cannot be used fails the start with nothing to close.
  const disk = config.diskCache
    ? await DiskBlocks.open(config.diskCache.dir, {
        maxBytes: config.diskCache.maxBytes,
        blockBytes: BLOCK_BYTES,
        report: (failures, last) =>
          logger.warn({ failures, err: last }, "block cache slab failed (the blocks are read from S3)"),
      })
    : undefined;
  // Named in pg_stat_activity (the bench finds the API's backends by it to read their CPU). Bun prepares each
  // statement text once per connection; generic plans skip planning on every call (about half of PostgreSQL's CPU
  // per list call: the count statement's init plans are many). The plans are the same index scans the custom ones
  // are (checked with EXPLAIN: every statement is bounded by the tenant and keyed by time on a B-tree).
  const sql = new SQL({
    url: config.pgUrl,
    max: config.pgPool,
    connection: { application_name: `svc-audit-api:${process.pid}`, plan_cache_mode: "force_generic_plan" },
  });
  const s3 = new S3Client({
    endpoint: config.s3.endpoint,
    region: config.s3.region,
    credentials:
      config.s3.accessKeyId && config.s3.secretAccessKey
        ? { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey }
        : undefined,
    forcePathStyle: config.s3.forcePathStyle,
    // Ranged GETs carry no whole-object checksum to validate (and are presigned: version-reader.ts); WHEN_SUPPORTED
    // would ask for checksum mode on each GET.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const tail = config.tail ? KafkaTail.start(sql, config.schema, config.tail, logger) : undefined;
  const objects = new VersionReader(s3);
  const queries = new AuditQueries(
    new IndexReader(sql, config.schema, new RollupSums()),
    objects,
    new PageTokens(config.pageTokenKey),
    config.limits,
    tail?.store,
    config.objectCacheBytes > 0 ? new BlockCache(objects, config.objectCacheBytes, undefined, disk) : undefined,
  );
  const health = new HealthState("audit", process.env.HOSTNAME ?? "audit-api", "active");
  /** The clients opened above: closed on a failed start and at the end of a stop. */
  const closeClients = async () => {
    await tail?.stop();
    await sql.close();
    s3.destroy();
    await disk?.close(); // after the blocks being written
  };

  const grpc = new Server();
  grpc.addService(AuditServiceService, auditServiceImplementation(auth, queries, config.limits));
  grpc.addService(HealthService, grpcHealth(health, ["audit.v2.AuditService"]));
  addReflection(grpc);
  let grpcPort: number;
  try {
    grpcPort = await bindGrpcServer(grpc, `${config.grpcHost}:${config.grpcPort}`);
  } catch (error) {
    await closeClients();
    throw error;
  }
  let rest: ReturnType<ReturnType<typeof restApp>["listen"]>;
  try {
    // Elysia listens with SO_REUSEPORT unless told not to: a second replica on a taken port would start and share
    // its connections instead of failing.
    rest = restApp(auth, queries, config.limits, health).listen({
      hostname: config.restHost,
      port: config.restPort,
      reusePort: false,
    });
  } catch (cause) {
    grpc.forceShutdown();
    await closeClients();
    throw new AuditApiError(
      "AUDIT_API_LISTEN_FAILED",
      `cannot listen on ${config.restHost}:${config.restPort} (SVC_AUDIT_REST_PORT): ${(cause as Error).message}`,
      {
        subject: "SVC_AUDIT_REST_PORT",
        cause,
      },
    );
  }
  health.markInitialized();

  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await rest.stop();
      // Open health watches never end by themselves: a bounded graceful stop, then the rest is cut.
      await stopGrpcServer(grpc, 5_000);
      await closeClients();
      logger.info({}, "audit api stopped");
      resolveDone();
    })();
    return stopping;
  };
  return { grpcPort, restPort: rest.server?.port ?? config.restPort, queries, tail: tail?.store, stop, done };
}
