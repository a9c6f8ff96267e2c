import { S3Client } from "@aws-sdk/client-s3";
import { PartitionBatch, putBatchObject, type SealedBatch, writeBatchIndex } from "@svc/queue-consumer";
import { randomName, stackEnv } from "@svc/testkit";
import type { SQL } from "bun";

/** One record as the emitter writes it (the fields of AuditRecordSchema). */
export interface TestRecord {
  id: string;
  time: string;
  source: string;
  action: string;
  resource: string;
  result: string;
  duration_ms: number;
  claimed_tenant_id: string;
  principal_id: string;
  tenant_id: string;
}

export function testS3(): S3Client {
  const { s3 } = stackEnv();
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    forcePathStyle: true,
  });
}

/** A test's own key prefix (shared bucket `svc-audit`) and index schema. */
export function storageNames(purpose: string) {
  return {
    keyPrefix: `test/api-${purpose}-${randomName("p").slice(2)}/`,
    schema: randomName(`t_api_${purpose}`).replaceAll("-", "_"),
    topic: randomName("svc-test-api"),
  };
}

export function sealBatch(
  topic: string,
  partition: number,
  firstOffset: bigint,
  records: readonly TestRecord[],
): SealedBatch {
  const batch = new PartitionBatch(topic, partition);
  records.forEach((record, i) => {
    batch.add(Buffer.from(JSON.stringify(record)), firstOffset + BigInt(i), Date.parse(record.time), i);
  });
  return batch.seal();
}

/** Writes a batch through the writer's real path: PUT under Object Lock, then the index transaction. */
export async function storeBatch(
  sql: SQL,
  s3: S3Client,
  names: { keyPrefix: string; schema: string },
  batch: SealedBatch,
): Promise<number> {
  const object = await putBatchObject(
    s3,
    { bucket: "svc-audit", keyPrefix: names.keyPrefix, retentionDays: 1, compression: "none" },
    batch,
  );
  return (await writeBatchIndex(sql, names.schema, batch, object)).inserted;
}

/** The stable order of the API: time, then id (ids of one width, so byte and collation orders agree). */
export function byTimeThenId(a: TestRecord, b: TestRecord): number {
  const ta = Date.parse(a.time);
  const tb = Date.parse(b.time);
  if (ta !== tb) return ta - tb;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
