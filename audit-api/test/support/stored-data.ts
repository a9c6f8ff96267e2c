import { S3Client } from "@aws-sdk/client-s3";
import {
  claimIndexVersion,
  ensureIndexSchema,
  PartitionBatch,
  principalPostingsInsert,
  putBatchObject,
  type SealedBatch,
  writeBatchIndex,
} from "@svc/queue-consumer";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";

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

/**
 * A test file's own stored data on the stack: its `storageNames`, a PostgreSQL pool and an S3 client. `create` makes
 * the index schema (in `beforeAll`); `remove` drops it and closes both clients (in `afterAll`, after whatever uses
 * them has stopped).
 */
export function testStorage(purpose: string) {
  const names = storageNames(purpose);
  const sql = new SQL({ url: stackEnv().postgresUrl, max: 2 });
  const s3 = testS3();
  return {
    names,
    sql,
    s3,
    create: () => ensureIndexSchema(sql, names.schema),
    async remove(): Promise<void> {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${names.schema}" CASCADE`);
      await sql.close();
      s3.destroy();
    },
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
  compression: "none" | "gzip" = "none",
): Promise<number> {
  const object = await putBatchObject(
    s3,
    { bucket: "svc-audit", keyPrefix: names.keyPrefix, retentionDays: 1, compression },
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

/** The API's env for a test: ports 0 on loopback, the stack's PostgreSQL and MinIO, quiet logs. */
export function apiEnv(schema: string, extra: Record<string, string> = {}): Record<string, string> {
  const stack = stackEnv();
  return {
    SVC_AUDIT_HOST_PORT: "0",
    SVC_AUDIT_GRPC_HOST: "127.0.0.1",
    SVC_AUDIT_REST_PORT: "0",
    SVC_AUDIT_REST_HOST: "127.0.0.1",
    SVC_AUDIT_PG_URL: stack.postgresUrl,
    SVC_AUDIT_INDEX_SCHEMA: schema,
    SVC_AUDIT_S3_ENDPOINT: stack.s3.endpoint,
    SVC_AUDIT_S3_REGION: stack.s3.region,
    SVC_AUDIT_S3_ACCESS_KEY: stack.s3.accessKeyId,
    SVC_AUDIT_S3_SECRET_KEY: stack.s3.secretAccessKey,
    SVC_AUDIT_API_PAGE_TOKEN_KEY: "test-page-token-key-0123456789abcdef",
    SVC_AUDIT_LOG_LEVEL: "silent",
    ...extra,
  };
}

/** Auth off, as a test environment may run it (spec): x-tenant-id alone selects the tenant. */
export const AUTH_DISABLED = { SVC_AUTH_DISABLED: "true", SVC_AUTH_DISABLED_ACKNOWLEDGE: "test-environment-only" };

export function sampleRecord(
  id: string,
  tenantId: string,
  timeMs: number,
  extra: Partial<TestRecord> = {},
): TestRecord {
  return {
    id,
    time: new Date(timeMs).toISOString(),
    source: "endpoint",
    action: "/svc.Endpoint/Search",
    resource: "index/products",
    result: "OK",
    duration_ms: 1.5,
    claimed_tenant_id: tenantId,
    principal_id: "svc-app",
    tenant_id: tenantId,
    ...extra,
  };
}

/**
 * Index rows of a test's own (`rows`: a SELECT of the events' ten columns — id, tenant id, time, principal, action,
 * result, resource, object, byte start and length — over `params`), inserted as a writer of the schema's version
 * inserts them: the tenant by its key, with their principal postings (docs/audit-storage.md), not counted in the
 * rollups.
 */
export async function insertIndexRows(sql: SQL, schema: string, rows: string, params: unknown[] = []): Promise<void> {
  await sql.begin(async (tx) => {
    await claimIndexVersion(tx);
    const tenants = `"${schema}".tenants`;
    await tx.unsafe(
      `INSERT INTO ${tenants} (tenant_id) SELECT DISTINCT r.tenant_id FROM (${rows}) AS r(id, tenant_id)
       ON CONFLICT (tenant_id) DO NOTHING`,
      params,
    );
    await tx.unsafe(
      `WITH input (id, tenant_id, time, principal_id, action, result, resource, object_id, byte_start, byte_length) AS (
         ${rows}
       ), added AS (
         INSERT INTO "${schema}".events (id, tenant_key, time, principal_id, action, result, resource, object_id,
                                         byte_start, byte_length)
         SELECT i.id, t.tenant_key, i.time, i.principal_id, i.action, i.result, i.resource, i.object_id, i.byte_start,
                i.byte_length
         FROM input i JOIN ${tenants} t USING (tenant_id)
         RETURNING tenant_key, principal_id, time, id
       ), named AS (
         SELECT t.tenant_id, a.principal_id, a.time, a.id FROM added a JOIN ${tenants} t USING (tenant_key)
       ) ${principalPostingsInsert(schema, "named")}`,
      params,
    );
  });
}
