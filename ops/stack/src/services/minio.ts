import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import type { StackContext, StackService } from "../context.ts";
import { ensureGoBinary } from "../installers.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { ensureLockedBucket } from "./locked-bucket.ts";

const TOOL = {
  name: "minio",
  moduleDir: join(import.meta.dir, "..", "..", "..", "tools", "minio"),
  pkg: "github.com/minio/minio",
};
const endpoint = (ctx: StackContext) => `http://127.0.0.1:${ctx.config.minio.port}`;

export function stackS3Client(ctx: StackContext): S3Client {
  const { root_user, root_password, region } = ctx.config.minio;
  return new S3Client({
    endpoint: endpoint(ctx),
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: root_user, secretAccessKey: root_password },
  });
}

export const minio: StackService = {
  name: "minio",
  after: [],
  readiness: { timeoutMs: 60_000 },
  ports: (ctx) => [ctx.config.minio.port, ctx.config.minio.console_port],

  async install(ctx, task) {
    const bin = await ensureGoBinary(ctx, task, TOOL);
    task.done(bin);
  },

  async start(ctx, task) {
    const { port, console_port, root_user, root_password, buckets, retention_days } = ctx.config.minio;
    const bin = await ensureGoBinary(ctx, task, TOOL);
    const data = join(ctx.stateDir, "minio", "data");
    mkdirSync(data, { recursive: true });
    task.update(1, "starting");
    const daemon = await startServer(ctx, this, {
      command: bin,
      args: [
        "server",
        data,
        "--address",
        `127.0.0.1:${port}`,
        "--console-address",
        `127.0.0.1:${console_port}`,
        "--quiet",
      ],
      env: {
        MINIO_ROOT_USER: root_user,
        MINIO_ROOT_PASSWORD: root_password,
        MINIO_UPDATE: "off",
        MINIO_CI_CD: "1",
      },
    });
    task.update(2, "creating Object Lock buckets");
    const s3 = stackS3Client(ctx);
    try {
      for (const bucket of buckets) {
        await ensureLockedBucket(s3, bucket, retention_days);
      }
    } finally {
      s3.destroy();
    }
    task.done(this.address(ctx));
    return daemon;
  },

  async probe(ctx) {
    const response = await fetch(`${endpoint(ctx)}/minio/health/ready`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).catch(() => undefined);
    return response?.status === 200;
  },

  address: (ctx) => `${endpoint(ctx)} (console 127.0.0.1:${ctx.config.minio.console_port})`,

  exports(ctx) {
    const { root_user, root_password, region, buckets } = ctx.config.minio;
    return {
      SVC_STACK_S3_ENDPOINT: endpoint(ctx),
      SVC_STACK_S3_REGION: region,
      SVC_STACK_S3_ACCESS_KEY: root_user,
      SVC_STACK_S3_SECRET_KEY: root_password,
      SVC_STACK_S3_BUCKETS: buckets.join(","),
    };
  },
};
