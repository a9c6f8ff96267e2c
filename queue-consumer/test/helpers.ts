import { afterAll, beforeAll, expect } from "bun:test";
import { ListObjectVersionsCommand, type ObjectVersion, S3Client } from "@aws-sdk/client-s3";
import { Admin, Consumer, Producer } from "@platformatic/kafka";
import { bucketPrefix, randomName, stackEnv, topicName, waitFor } from "@svc/testkit";
import { SQL } from "bun";
import {
  checkPrincipalPostings,
  PartitionBatch,
  parseQueueConsumerConfig,
  type QueueConsumerConfig,
  type SealedBatch,
} from "../index.ts";
import { readerS3Client, writerS3Client } from "../src/s3-client.ts";

/** Stack addresses as the consumer's env variables (the dev stack's, or a private one's `overrides`). */
export interface Addresses {
  brokers: string;
  s3Endpoint: string;
  s3Region: string;
  s3AccessKey: string;
  s3SecretKey: string;
  pgUrl: string;
}

export function stackAddresses(env: Record<string, string | undefined> = process.env): Addresses {
  const stack = stackEnv(env);
  return {
    brokers: stack.kafkaBrokers.join(","),
    s3Endpoint: stack.s3.endpoint,
    s3Region: stack.s3.region,
    s3AccessKey: stack.s3.accessKeyId,
    s3SecretKey: stack.s3.secretAccessKey,
    pgUrl: stack.postgresUrl,
  };
}

/** A test's own topic, key prefix, index schema and group, on the shared bucket `svc-audit`. */
export interface TestNames {
  topic: string;
  keyPrefix: string;
  schema: string;
  groupId: string;
}

export function testNames(purpose: string): TestNames {
  return {
    topic: topicName(`qc-${purpose}`),
    keyPrefix: bucketPrefix(`qc-${purpose}`),
    schema: randomName(`t_qc_${purpose}`).replaceAll("-", "_"),
    groupId: randomName(`svc-test-qc-${purpose}`),
  };
}

/** The consumer's env for a test: small batches, short session timeout, no metrics listener unless asked. */
export function consumerEnv(
  addresses: Addresses,
  names: TestNames,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    SVC_AUDIT_KAFKA_BROKERS: addresses.brokers,
    SVC_AUDIT_TOPIC: names.topic,
    SVC_AUDIT_GROUP_ID: names.groupId,
    SVC_AUDIT_BUCKET: "svc-audit",
    SVC_AUDIT_KEY_PREFIX: names.keyPrefix,
    SVC_AUDIT_S3_ENDPOINT: addresses.s3Endpoint,
    SVC_AUDIT_S3_REGION: addresses.s3Region,
    SVC_AUDIT_S3_ACCESS_KEY: addresses.s3AccessKey,
    SVC_AUDIT_S3_SECRET_KEY: addresses.s3SecretKey,
    SVC_AUDIT_RETENTION_DAYS: "1",
    SVC_AUDIT_PG_URL: addresses.pgUrl,
    SVC_AUDIT_INDEX_SCHEMA: names.schema,
    SVC_AUDIT_BATCH_MAX_AGE_MS: "500",
    SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000",
    SVC_AUDIT_RETRY_MAX_MS: "500",
    // A PUT lost on a busy machine is retried within the tests' waits (the default is 60 s).
    SVC_AUDIT_S3_PUT_TIMEOUT_MS: "10000",
    SVC_AUDIT_LOG_LEVEL: "warn",
    ...extra,
  };
}

/** The writer as its own process (`bun run queue-consumer/src/main.ts`) with the test's env: one to kill -9. */
export function spawnConsumer(addresses: Addresses, names: TestNames) {
  return Bun.spawn([process.execPath, "run", new URL("../src/main.ts", import.meta.url).pathname], {
    env: { ...process.env, ...consumerEnv(addresses, names) },
    stdout: "ignore",
    stderr: "inherit",
  });
}

export function consumerConfig(
  addresses: Addresses,
  names: TestNames,
  extra: Record<string, string> = {},
): QueueConsumerConfig {
  return parseQueueConsumerConfig(consumerEnv(addresses, names, extra));
}

export async function createTopic(brokers: string, topic: string, partitions = 6): Promise<void> {
  const admin = new Admin({ clientId: "qc-test-admin", bootstrapBrokers: brokers.split(",") });
  try {
    await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
  } finally {
    await admin.close();
  }
}

/** The group's committed offset of each of `topic`'s first `partitions` partitions (-1: none committed). */
export async function committedOffsets(
  brokers: string,
  groupId: string,
  topic: string,
  partitions = 6,
): Promise<bigint[]> {
  const reader = new Consumer({ clientId: "qc-test-offsets", bootstrapBrokers: brokers.split(","), groupId });
  try {
    const wanted = Array.from({ length: partitions }, (_, i) => i);
    const offsets = await reader.listCommittedOffsets({ topics: [{ topic, partitions: wanted }] });
    return offsets.get(topic) ?? [];
  } finally {
    await reader.close(true);
  }
}

export async function deleteTopic(brokers: string, topic: string): Promise<void> {
  const admin = new Admin({ clientId: "qc-test-admin", bootstrapBrokers: brokers.split(","), retries: 1 });
  try {
    await admin.deleteTopics({ topics: [topic] });
  } catch {
    // best effort: a topic of a test that failed early may not exist
  } finally {
    await admin.close().catch(() => {});
  }
}

/** One valid audit record line for tenant `tenant`, about 400 bytes. */
export function recordLine(
  id: string,
  tenant: string,
  time = new Date().toISOString(),
  action = "/kms.v1.Kms/Encrypt",
) {
  return JSON.stringify({
    id,
    time,
    source: "endpoint",
    action,
    resource: `keys/${tenant}/k-0001/versions/3`,
    result: "ok",
    duration_ms: 1.25,
    claimed_tenant_id: tenant,
    principal_id: `user-${id.slice(-2)}`,
    tenant_id: tenant,
    attributes: { request_id: `req-${id}`, client: "svc-cli/1.0 (linux; x86_64) padding-to-about-400-bytes" },
  });
}

export interface ProducedLine {
  id: string;
  tenant: string;
  line: string;
}

/** `count` records over `tenants` tenants, keyed by tenant as the agent keys them. */
export function makeLines(count: number, tenants = 12, prefix = randomName("ev")): ProducedLine[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `${prefix}-${String(i).padStart(7, "0")}`;
    const tenant = `tenant-${i % tenants}`;
    return { id, tenant, line: recordLine(id, tenant) };
  });
}

export class TestProducer {
  private readonly producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  constructor(brokers: string) {
    this.producer = new Producer({
      clientId: "qc-test-producer",
      bootstrapBrokers: brokers.split(","),
      acks: -1,
      retries: true,
      retryDelay: 250,
    });
  }
  async send(topic: string, lines: readonly ProducedLine[], chunk = 500): Promise<void> {
    for (let i = 0; i < lines.length; i += chunk) {
      await this.producer.send({
        messages: lines.slice(i, i + chunk).map((l) => ({
          topic,
          key: Buffer.from(l.tenant),
          value: Buffer.from(l.line),
          timestamp: BigInt(Date.now()),
        })),
      });
    }
  }
  close(): Promise<void> {
    return this.producer.close();
  }
}

function s3Settings(addresses: Addresses) {
  return {
    endpoint: addresses.s3Endpoint,
    region: addresses.s3Region,
    credentials: { accessKeyId: addresses.s3AccessKey, secretAccessKey: addresses.s3SecretKey },
    forcePathStyle: true,
  };
}

export function s3Client(addresses: Addresses): S3Client {
  return new S3Client(s3Settings(addresses));
}

/**
 * The writer's own S3 client (`writerS3Client`: `fetch`, no SDK retries) on the stack's MinIO, for its PUTs. Reads go
 * through `s3Client`: `fetch` decodes a gzip object's body, which the SDK's response checksum then refuses.
 */
export function writerClient(addresses: Addresses, payloadSigning: "signed" | "unsigned" = "unsigned"): S3Client {
  return writerS3Client({ ...s3Settings(addresses), payloadSigning });
}

/** The client `rebuild-index` reads with (`readerS3Client`) on the stack's MinIO, or on `endpoint`. */
export function readerClient(addresses: Addresses, endpoint = addresses.s3Endpoint): S3Client {
  return readerS3Client({ ...s3Settings(addresses), endpoint, payloadSigning: "unsigned" });
}

/** Every version of every object under `prefix`. */
export async function listVersions(s3: S3Client, bucket: string, prefix: string): Promise<ObjectVersion[]> {
  const versions: ObjectVersion[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await s3.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        VersionIdMarker: versionIdMarker,
      }),
    );
    versions.push(...(page.Versions ?? []));
    if (!page.IsTruncated) return versions;
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}

/** Index facts of a test schema. */
export async function indexFacts(sql: SQL, schema: string) {
  const t = (name: string) => sql(`${schema}.${name}`);
  const [events] = await sql`SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids FROM ${t("events")}`;
  const [counts] = await sql`SELECT coalesce(sum(n), 0)::int AS n FROM ${t("counts")}`;
  const [objects] = await sql`SELECT count(*)::int AS n FROM ${t("objects")}`;
  const postings = await checkPrincipalPostings(sql, schema);
  return {
    events: (events as { n: number }).n,
    distinctIds: (events as { ids: number }).ids,
    counted: (counts as { n: number }).n,
    /** Postings elements naming an event (each event is in exactly one when this equals `events`, strays 0). */
    posted: postings.posted,
    strays: postings.strays,
    objects: (objects as { n: number }).n,
  };
}

/** Waits until the index holds `count` distinct ids (none lost), then answers its facts for exact checks. */
export async function waitAllIndexed(
  sql: SQL,
  schema: string,
  count: number,
  timeoutMs: number,
): Promise<Awaited<ReturnType<typeof indexFacts>>> {
  return await waitFor(
    "every id indexed",
    async () => {
      const facts = await indexFacts(sql, schema);
      // Thrown, not returned: a timeout then says how far the index got.
      if (facts.distinctIds < count) throw new Error(`${facts.distinctIds} of ${count} ids indexed`);
      return facts;
    },
    { timeoutMs },
  );
}

/**
 * Holds an EXCLUSIVE lock on the schema's `marks` table: every index transaction (it writes `marks` last) waits,
 * after the batch's PUT and before its offset commit, until `release()`.
 */
export async function holdIndexLock(sql: SQL, schema: string): Promise<{ release(): Promise<void> }> {
  const held = Promise.withResolvers<void>();
  const taken = Promise.withResolvers<void>();
  const lock = sql.begin(async (tx) => {
    await tx`LOCK TABLE ${sql(`${schema}.marks`)} IN EXCLUSIVE MODE`;
    taken.resolve();
    await held.promise;
  });
  await Promise.race([taken.promise, lock]);
  return {
    async release() {
      held.resolve();
      await lock;
    },
  };
}

/** A counter's value (0 before its first increment): the consumer's metrics are prom-client counters. */
export async function counted(counter: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> {
  return (await counter.get()).values[0]?.value ?? 0;
}

/** A sealed batch of tenant-a records (one per line, `principal` replacing the record's), from `firstOffset` on. */
export function batchOf(
  lines: { id: string; time: string; principal?: string }[],
  firstOffset: bigint,
  partition = 1,
): SealedBatch {
  const batch = new PartitionBatch("topic.x", partition);
  lines.forEach((l, i) => {
    const value = JSON.parse(recordLine(l.id, "tenant-a", l.time));
    if (l.principal) value.principal_id = l.principal;
    batch.add(Buffer.from(JSON.stringify(value)), firstOffset + BigInt(i), 0, 1);
  });
  return batch.seal();
}

/** The object a batch was written to, as `writeBatchIndex` takes it. */
export const writtenObject = (key: string, versionId: string, bytes = 100) => ({
  bucket: "svc-audit",
  key,
  versionId,
  bytes,
  retainUntil: new Date(),
  writtenAt: new Date(),
});

/** Index transactions of `schema` waiting on `holdIndexLock`'s lock. */
export async function indexWritesWaiting(sql: SQL, schema: string): Promise<number> {
  const [row] = await sql`
    SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = ${`"${schema}".marks`}::regclass`;
  return (row as { n: number }).n;
}

export async function indexedIds(sql: SQL, schema: string): Promise<Set<string>> {
  const rows = (await sql`SELECT id FROM ${sql(`${schema}.events`)}`) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/**
 * Turns an index schema's `events` back into version 5's (`tenant_id` text first in its key, no `tenants`): empty,
 * with the version 5 trigger. For the migration tests, whose older schemas start from the current DDL.
 */
export async function backToVersion5Events(sql: SQL, schema: string): Promise<void> {
  await sql.unsafe(`DROP TABLE "${schema}".events`);
  await sql.unsafe(`DROP TABLE "${schema}".tenants`);
  await sql.unsafe(`CREATE TABLE "${schema}".events (
       id text COLLATE "C" NOT NULL, tenant_id text COLLATE "C" NOT NULL, time timestamptz NOT NULL,
       principal_id text COLLATE "C" NOT NULL, action text COLLATE "C" NOT NULL, result text COLLATE "C" NOT NULL,
       resource text COLLATE "C" NOT NULL, object_id bigint NOT NULL, byte_start bigint NOT NULL,
       byte_length int NOT NULL, CONSTRAINT events_tenant_time_id PRIMARY KEY (tenant_id, time, id))`);
  await sql.unsafe(`CREATE TRIGGER events_writer_version BEFORE INSERT ON "${schema}".events
       FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".events_writer_version()`);
}

/** Makes `version` the only version an index schema's migration table records (an older schema, for a test). */
export async function recordVersion(sql: SQL, schema: string, version: number): Promise<void> {
  await sql.unsafe(`DELETE FROM "${schema}".schema_migrations`);
  await sql.unsafe(`INSERT INTO "${schema}".schema_migrations (version) VALUES (${version})`);
}

export async function dropSchema(sql: SQL, schema: string): Promise<void> {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** The bytes of a GetObject answer. */
export async function bodyOf(answer: { Body?: { transformToByteArray(): Promise<Uint8Array> } }): Promise<Buffer> {
  if (!answer.Body) throw new Error("GetObject answered without a body");
  return Buffer.from(await answer.Body.transformToByteArray());
}

/** What `pipelineFixture` gives a test file: the stack's addresses, clients and its own names. */
export interface PipelineFixture {
  addresses: Addresses;
  s3: S3Client;
  sql: SQL;
  names: TestNames;
  producer: TestProducer;
}

/**
 * A test file's (or `describe` block's) own topic of `partitions` partitions and index schema on the stack, with
 * clients: the topic is created before its tests; after them `beforeTeardown` runs (replicas still running), then
 * the producer closes, the topic and schema are deleted and the clients closed.
 */
export function pipelineFixture(
  purpose: string,
  options: { partitions: number; sqlConnections?: number; beforeTeardown?: () => Promise<unknown> },
): PipelineFixture {
  const addresses = stackAddresses();
  const fixture: PipelineFixture = {
    addresses,
    s3: s3Client(addresses),
    sql: new SQL({ url: addresses.pgUrl, max: options.sqlConnections ?? 2 }),
    names: testNames(purpose),
    producer: new TestProducer(addresses.brokers),
  };
  beforeAll(async () => {
    await createTopic(addresses.brokers, fixture.names.topic, options.partitions);
  });
  afterAll(async () => {
    await options.beforeTeardown?.();
    await fixture.producer.close();
    await deleteTopic(addresses.brokers, fixture.names.topic);
    await dropSchema(fixture.sql, fixture.names.schema);
    await fixture.sql.close();
    fixture.s3.destroy();
  });
  return fixture;
}

/** One event row of the writer's binary `COPY events`, decoded (`encodedEvents`). */
export interface EncodedEvent {
  object_id: bigint;
  id: string;
  tenant_id: string;
  /** Microseconds from 2000-01-01 UTC. */
  micros: number;
  principal_id: string;
  action: string;
  result: string;
  resource: string;
  byte_start: number;
  byte_length: number;
}

/** The rows of a binary `COPY` payload, each field's bytes (PostgreSQL's "Binary Format", read back). */
export function copyRows(payload: Buffer): Buffer[][] {
  expect(payload.subarray(0, 11).toString("latin1")).toBe("PGCOPY\n\xff\r\n\0");
  let at = 19;
  const rows: Buffer[][] = [];
  for (;;) {
    const fields = payload.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    const row: Buffer[] = [];
    for (let f = 0; f < fields; f += 1) {
      const length = payload.readInt32BE(at);
      row.push(payload.subarray(at + 4, at + 4 + length));
      at += 4 + length;
    }
    rows.push(row);
  }
  expect(at).toBe(payload.length);
  return rows;
}

/**
 * The event rows a sealed batch's plain chunks hold, decoded, with `objectId` written in; each of the batch's tenants
 * is given a key of its own (100 on, in the order first seen), and a row's key is read back to its tenant's id.
 */
export function encodedEvents(batch: SealedBatch, objectId = 7n): EncodedEvent[] {
  const tenants = [...new Set(batch.chunks.flatMap((chunk) => chunk.tenants))];
  const keys = new Map(tenants.map((tenant, i) => [tenant, 100 + i]));
  return batch.chunks.flatMap((chunk) => {
    expect(chunk.plain).toBe(true);
    return copyRows(chunk.eventRows(objectId, keys)).map((row) => {
      expect(row).toHaveLength(10);
      const text = (f: number) => (row[f] as Buffer).toString("utf8");
      const tenant = tenants[(row[1] as Buffer).readInt32BE() - 100];
      if (tenant === undefined) throw new Error(`event row with tenant key ${(row[1] as Buffer).readInt32BE()}`);
      return {
        object_id: (row[0] as Buffer).readBigInt64BE(),
        tenant_id: tenant,
        id: text(2),
        micros: Number((row[3] as Buffer).readBigInt64BE()),
        principal_id: text(4),
        action: text(5),
        result: text(6),
        resource: text(7),
        byte_start: Number((row[8] as Buffer).readBigInt64BE()),
        byte_length: (row[9] as Buffer).readInt32BE(),
      };
    });
  });
}
