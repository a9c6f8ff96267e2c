import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { runCommand } from "@svc/common";
import { hangUpListener, rejectionOf } from "@svc/testkit";
import { SQL } from "bun";
import { ensureIndexSchema, PartitionBatch, putBatchObject, QueueConsumerError, writeBatchIndex } from "../index.ts";
import { parseObjectKey } from "../src/object-key.ts";
import { type RebuildTarget, rebuildIndex } from "../src/rebuild-index.ts";
import {
  consumerEnv,
  dropSchema,
  readerClient,
  recordLine,
  stackAddresses,
  testNames,
  writerClient,
} from "./helpers.ts";

const MAIN = join(import.meta.dir, "..", "src", "rebuild-index-main.ts");
const addresses = stackAddresses();
const sql = new SQL({ url: addresses.pgUrl, max: 2 });
const s3 = writerClient(addresses);
const reader = readerClient(addresses);
const names = testNames("rebuild");
const schemas: string[] = [];
const DAY_1 = "2026-11-20";
const DAY_2 = "2026-11-21";

/** A fresh index schema of this file (dropped after it). */
function schemaName(purpose: string): string {
  const schema = `${names.schema}_${purpose}`;
  schemas.push(schema);
  return schema;
}

/** `count` records from `from` of two tenants and three principals, at minutes of `day`, in offset order. */
function batch(partition: number, firstOffset: number, count: number, day: string, from = 0): PartitionBatch {
  const built = new PartitionBatch(names.topic, partition);
  const kafkaTime = Date.parse(`${day}T10:00:00Z`);
  for (let i = from; i < from + count; i += 1) {
    const time = new Date(kafkaTime + i * 7_000).toISOString();
    const value = JSON.parse(recordLine(`rb-${partition}-${String(i).padStart(5, "0")}`, `tenant-${i % 2}`, time));
    value.principal_id = `user-${i % 3}`;
    built.add(Buffer.from(JSON.stringify(value)), BigInt(firstOffset + i - from), kafkaTime, 0);
  }
  return built;
}

const settings = { bucket: "svc-audit", keyPrefix: names.keyPrefix, retentionDays: 1 };
const original = schemaName("original");

/** Writes a batch as the writer does: PUT under Object Lock, then its index rows into `original`. */
async function write(built: PartitionBatch, compression: "none" | "gzip" = "none"): Promise<void> {
  const sealed = built.seal();
  const object = await putBatchObject(s3, { ...settings, compression }, sealed);
  await writeBatchIndex(sql, original, sealed, object);
}

beforeAll(async () => {
  await ensureIndexSchema(sql, original);
  await write(batch(1, 0, 100, DAY_1));
  // The same batch written again after a crash, with more records by then: a second version of its key.
  await write(batch(1, 0, 120, DAY_1));
  await write(batch(2, 500, 60, DAY_2));
  await write(batch(3, 40, 30, DAY_2), "gzip");
  // Not a batch object: a file someone put under the topic's prefix.
  await s3.send(
    new PutObjectCommand({
      Bucket: "svc-audit",
      Key: `${names.keyPrefix}v1/${names.topic}/notes/README.txt`,
      Body: "not audit data\n",
      ChecksumAlgorithm: "CRC32",
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const schema of schemas) await dropSchema(sql, schema);
  await sql.close();
  s3.destroy();
  reader.destroy();
});

/** A rebuild of this file's objects into `schema` (through the reader's client), `changes` applied. */
const targetFor = (schema: string, changes: Partial<RebuildTarget> = {}): RebuildTarget => ({
  s3: reader,
  sql,
  bucket: "svc-audit",
  keyPrefix: names.keyPrefix,
  topic: names.topic,
  schema,
  ...changes,
});

/** What the audit API reads from an index, without its surrogate keys (object ids, which a rebuild numbers anew). */
async function contents(schema: string) {
  const t = (name: string) => sql(`${schema}.${name}`);
  const events = await sql`
    SELECT tn.tenant_id, e.time::text, e.id, e.principal_id, e.action, e.result, e.resource, o.key,
           e.byte_start::int, e.byte_length
    FROM ${t("events")} e JOIN ${t("tenants")} tn USING (tenant_key) JOIN ${t("objects")} o USING (object_id)
    ORDER BY 1, 2, 3`;
  const counts = await sql`
    SELECT tenant_id, minute::text, principal_id, action, result, n::int FROM ${t("counts")} ORDER BY 1, 2, 3, 4, 5`;
  const hours = await sql`
    SELECT tenant_id, hour::text, principal_id, action, result, n::int FROM ${t("counts_hour")} ORDER BY 1, 2, 3, 4, 5`;
  const postings = await sql`
    SELECT p.tenant_id, p.principal_id, u.time::text, u.id
    FROM ${t("principal_events")} p, unnest(p.times, p.ids) AS u(time, id) ORDER BY 1, 2, 3, 4`;
  const objects = await sql`
    SELECT key, version_id, topic, partition, first_offset::text, last_offset::text, records, bytes::int,
           min_time::text, max_time::text
    FROM ${t("objects")} ORDER BY key, first_offset, last_offset`;
  const marks = await sql`SELECT topic, partition, indexed_through::text FROM ${t("marks")} ORDER BY 1, 2`;
  return { events, counts, hours, postings, objects, marks };
}

describe("rebuildIndex (real MinIO and PostgreSQL)", () => {
  test("an empty schema rebuilt from the objects answers as the index the writer wrote; run again, it reads nothing", async () => {
    const rebuilt = schemaName("rebuilt");
    await ensureIndexSchema(sql, rebuilt);
    const target = targetFor(rebuilt);
    const progress: number[] = [];
    const summary = await rebuildIndex({ ...target, onProgress: (so) => progress.push(so.versions) });
    expect(summary).toMatchObject({
      versions: 4,
      alreadyIndexed: 0,
      indexed: 4,
      // 120 + 60 + 30 events: the second version's first 100 are the first version's.
      eventsInserted: 210,
      unindexable: 0,
      foreign: 1,
      foreignKeys: [`${names.keyPrefix}v1/${names.topic}/notes/README.txt`],
      recordCountMismatch: [],
    });
    expect(progress).toEqual([1, 2, 3, 4]);
    const expected = await contents(original);
    const got = await contents(rebuilt);
    expect(got.events.length).toBe(210);
    // Which version of the retried key an event points at may differ (the same bytes): compared without it.
    expect(got.events).toEqual(expected.events);
    expect(got.counts).toEqual(expected.counts);
    expect(got.hours).toEqual(expected.hours);
    expect(got.postings).toEqual(expected.postings);
    expect(got.objects).toEqual(expected.objects);
    expect(got.marks).toEqual(expected.marks);

    const again = await rebuildIndex(target);
    expect(again).toMatchObject({ versions: 4, alreadyIndexed: 4, indexed: 0, eventsInserted: 0 });
    // Into the writer's own index: everything is there already.
    expect(await rebuildIndex({ ...target, schema: original })).toMatchObject({ alreadyIndexed: 4, indexed: 0 });
  });

  test("--from/--to read only those days' keys; a bad day is refused naming the argument", async () => {
    const partial = schemaName("partial");
    await ensureIndexSchema(sql, partial);
    const target = targetFor(partial);
    const summary = await rebuildIndex({ ...target, fromDay: DAY_2, toDay: DAY_2 });
    expect(summary).toMatchObject({ versions: 2, indexed: 2, eventsInserted: 90, foreign: 0 });
    const { objects } = await contents(partial);
    const days = objects.map((o: { key: string }) => parseObjectKey(o.key, names.keyPrefix)?.day);
    expect(days).toEqual([DAY_2, DAY_2]);
    for (const [fromDay, toDay, subject] of [
      [DAY_2, undefined, "--to"],
      ["2026-11-32", DAY_2, "--from"],
      [DAY_2, DAY_1, "--to"],
    ] as const) {
      const error = await rejectionOf(rebuildIndex({ ...target, fromDay, toDay }), QueueConsumerError);
      expect({ code: error.code, subject: error.subject }).toEqual({
        code: "QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID",
        subject,
      });
    }
  });

  test("an object whose offsets metadata is not a number: QUEUE_CONSUMER_REBUILD_READ_FAILED naming its key", async () => {
    const prefix = `${names.keyPrefix}bad-meta/`;
    const key = `${prefix}v1/${names.topic}/dt=${DAY_1}/hour=10/partition=009/00000000000000000001.jsonl`;
    await s3.send(
      new PutObjectCommand({
        Bucket: "svc-audit",
        Key: key,
        Body: `${recordLine("rb-bad-meta", "tenant-0")}\n`,
        Metadata: { "first-offset": "one", "last-offset": "1", records: "1" },
        ChecksumAlgorithm: "CRC32",
      }),
    );
    const schema = schemaName("bad_meta");
    await ensureIndexSchema(sql, schema);
    const target = targetFor(schema, { keyPrefix: prefix });
    const error = await rejectionOf(rebuildIndex(target), QueueConsumerError);
    expect({ code: error.code, subject: error.subject }).toEqual({
      code: "QUEUE_CONSUMER_REBUILD_READ_FAILED",
      subject: key,
    });
    expect(error.message).toContain("first-offset");
  });

  test("an index that cannot be read (no such schema): QUEUE_CONSUMER_INDEX_FAILED naming the object", async () => {
    const target = targetFor(`${names.schema}_never_created`);
    const error = await rejectionOf(rebuildIndex(target), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_INDEX_FAILED");
    expect(error.subject).toStartWith(`${names.keyPrefix}v1/${names.topic}/`);
  });

  test("S3 not answering: QUEUE_CONSUMER_REBUILD_READ_FAILED naming the prefix", async () => {
    const listener = hangUpListener();
    const nowhere = readerClient(addresses, listener.url);
    try {
      const schema = schemaName("nowhere");
      await ensureIndexSchema(sql, schema);
      const error = await rejectionOf(rebuildIndex(targetFor(schema, { s3: nowhere })), QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_REBUILD_READ_FAILED");
      expect(error.subject).toBe(`s3://svc-audit/${names.keyPrefix}v1/${names.topic}/`);
    } finally {
      nowhere.destroy();
      listener.stop();
    }
  });
});

describe("bun run audit:rebuild-index", () => {
  const run = (env: Record<string, string>, args: string[]) =>
    runCommand([process.execPath, "run", MAIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } });

  test("with the writer's settings: creates the schema, indexes, prints the summary as JSON, exits 0", async () => {
    const schema = schemaName("cli");
    const { code, stdout, stderr } = await run(consumerEnv(addresses, { ...names, schema }), [
      "--from",
      DAY_1,
      "--to",
      DAY_1,
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(stdout)).toMatchObject({ versions: 2, indexed: 2, eventsInserted: 120 });
  });

  test("a bad setting or argument exits 2 naming it", async () => {
    const env = consumerEnv(addresses, { ...names, schema: schemaName("cli_bad") });
    const badSetting = await run({ ...env, SVC_AUDIT_RETENTION_DAYS: "0" }, []);
    expect(badSetting.code).toBe(2);
    expect(badSetting.stderr).toContain("SVC_AUDIT_RETENTION_DAYS");
    const badDay = await run(env, ["--from", DAY_1]);
    expect(badDay.code).toBe(2);
    expect(badDay.stderr).toContain("QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID: --to");
    // Refused before anything was touched: the schema was not created.
    const created = await sql`SELECT 1 FROM pg_namespace WHERE nspname = ${env.SVC_AUDIT_INDEX_SCHEMA ?? ""}`;
    expect(created.length).toBe(0);
    const unknown = await run(env, ["--everything"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--everything");
  });
});
