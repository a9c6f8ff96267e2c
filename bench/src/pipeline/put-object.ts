/**
 * The writer's PUT alone: one batch object of N bench records (`PartitionBatch`, as the writer builds it) PUT to the
 * stack's MinIO by `putBatchObject` (Object Lock COMPLIANCE, CRC-32, 1-day retention) `--puts` times in a row, with
 * the writer's S3 client (`fetch`) or the SDK's default `node:http` handler, the body's SHA-256 in the signature or
 * `UNSIGNED-PAYLOAD` (`--signing`, the writer's `SVC_AUDIT_S3_PAYLOAD_SIGNING`). Prints CPU per PUT (this process) and
 * the PUT's median, lowest and highest time. Objects go under `bench/<run>-put/` in `svc-audit`; Object Lock keeps
 * them for the retention.
 *
 *   bun run bench/src/pipeline/put-object.ts [--records 16750] [--puts 30] [--handler fetch|node]
 *     [--signing signed|unsigned]
 */
import { parseArgs } from "node:util";
import { S3Client } from "@aws-sdk/client-s3";
import { PartitionBatch, putBatchObject, writerS3Client } from "@svc/queue-consumer";
import { stackEnv } from "@svc/testkit";
import { recordLine } from "./generate-records.ts";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "16750" },
    puts: { type: "string", default: "30" },
    handler: { type: "string", default: "fetch" },
    signing: { type: "string", default: "unsigned" },
  },
});
const records = Number(values.records);
const puts = Number(values.puts);
const handler = values.handler;
if (!Number.isInteger(records) || records <= 0 || !Number.isInteger(puts) || puts <= 0) {
  console.error("usage: put-object.ts [--records N] [--puts N] [--handler fetch|node] (positive integers)");
  process.exit(2);
}
if (handler !== "fetch" && handler !== "node") {
  console.error(`--handler: fetch or node (got ${handler})`);
  process.exit(2);
}
const signing = values.signing;
if (signing !== "signed" && signing !== "unsigned") {
  console.error(`--signing: signed or unsigned (got ${signing})`);
  process.exit(2);
}
if (handler === "node" && signing === "unsigned") {
  console.error("--signing unsigned goes with the writer's client (--handler fetch)");
  process.exit(2);
}

const stack = stackEnv();
const settings = {
  endpoint: stack.s3.endpoint,
  region: stack.s3.region,
  credentials: { accessKeyId: stack.s3.accessKeyId, secretAccessKey: stack.s3.secretAccessKey },
  forcePathStyle: true,
};
const s3 =
  handler === "fetch"
    ? writerS3Client({ ...settings, payloadSigning: signing })
    : new S3Client({ ...settings, maxAttempts: 1 });
const run = Bun.randomUUIDv7().replaceAll("-", "").slice(-10);
const batch = new PartitionBatch("svc.audit.events.v1", 0);
for (let i = 0; i < records; i += 1) batch.add(Buffer.from(recordLine(run, i, Date.now())), BigInt(i), Date.now(), 0);
const closed = batch.close();
const put = { bucket: "svc-audit", keyPrefix: `bench/${run}-put/`, retentionDays: 1, compression: "none" as const };

const times: number[] = [];
try {
  const cpu = process.cpuUsage();
  for (let i = 0; i < puts; i += 1) {
    const started = performance.now();
    // Each PUT its own key (the offsets name it): a retried key would be a new version of the same object.
    await putBatchObject(s3, put, { ...closed, firstOffset: BigInt(i * records) });
    times.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0).toFixed(1);
  console.log(
    `${handler}, ${signing}: ${puts} PUTs of ${(closed.body.length / 1e6).toFixed(1)} MB: CPU ${((used.user + used.system) / 1000 / puts).toFixed(1)} ms per PUT, ` +
      `median ${at(0.5)} ms (${times[0]?.toFixed(1)}–${times[times.length - 1]?.toFixed(1)})`,
  );
} finally {
  s3.destroy();
}
