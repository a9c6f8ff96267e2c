import { describe, expect, test } from "bun:test";
import { GetObjectCommand, GetObjectRetentionCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { rejectionOf, waitFor } from "@svc/testkit";
import { type BatchWritten, QueueConsumerError, startConsumer } from "../index.ts";
import {
  bodyOf,
  committedOffsets as committedOffsetsOf,
  consumerConfig,
  counted,
  createTopic,
  deleteTopic,
  dropSchema,
  indexFacts,
  listVersions,
  makeLines,
  pipelineFixture,
  testNames,
} from "./helpers.ts";

const { addresses, s3, sql, names, producer } = pipelineFixture("loop", { partitions: 6 });

const committedOffsets = (groupId: string, topic: string) => committedOffsetsOf(addresses.brokers, groupId, topic);

describe("startConsumer", () => {
  test("records → one Object-Locked JSONL object per partition batch, every id indexed and counted once, offsets committed", async () => {
    const consumer = await startConsumer(consumerConfig(addresses, names, { SVC_AUDIT_METRICS_PORT: "0" }));
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    try {
      const lines = makeLines(600);
      await producer.send(names.topic, lines);
      // The agent shipped some records twice (a crash after Kafka acknowledged, before its checkpoint).
      await producer.send(names.topic, lines.slice(100, 130));
      await waitFor(
        "630 records written",
        async () => (batches.reduce((n, b) => n + b.records, 0) >= 630 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      const facts = await indexFacts(sql, names.schema);
      expect(facts).toMatchObject({ events: 600, distinctIds: 600, counted: 600, posted: 600, strays: 0 });
      expect(facts.objects).toBe(batches.length);
      expect(batches.reduce((n, b) => n + b.inserted, 0)).toBe(600);

      // Every object: its key, its body (lines in offset order, as produced), its metadata and its lock.
      const produced = new Set(lines.map((l) => l.line));
      const stored = await listVersions(s3, "svc-audit", names.keyPrefix);
      expect(stored.length).toBe(batches.length);
      for (const b of batches) {
        expect(b.object.key).toMatch(
          new RegExp(
            `^${names.keyPrefix}v1/${names.topic.replaceAll(".", "\\.")}/dt=\\d{4}-\\d{2}-\\d{2}/hour=\\d{2}/partition=00${b.partition}/${String(b.firstOffset).padStart(20, "0")}\\.jsonl$`,
          ),
        );
        const object = await s3.send(
          new GetObjectCommand({ Bucket: "svc-audit", Key: b.object.key, VersionId: b.object.versionId }),
        );
        const body = (await bodyOf(object)).toString();
        const bodyLines = body.split("\n");
        expect(bodyLines.pop()).toBe("");
        expect(bodyLines.length).toBe(Number(b.lastOffset - b.firstOffset) + 1);
        for (const line of bodyLines) expect(produced.has(line)).toBe(true);
        expect(object.Metadata).toMatchObject({
          "first-offset": String(b.firstOffset),
          "last-offset": String(b.lastOffset),
          records: String(b.records),
        });
        const head = await s3.send(
          new HeadObjectCommand({
            Bucket: "svc-audit",
            Key: b.object.key,
            VersionId: b.object.versionId,
            ChecksumMode: "ENABLED",
          }),
        );
        expect(head.ChecksumCRC32).toBeString();
        const retention = await s3.send(
          new GetObjectRetentionCommand({ Bucket: "svc-audit", Key: b.object.key, VersionId: b.object.versionId }),
        );
        expect(retention.Retention?.Mode).toBe("COMPLIANCE");
      }

      // Each event's byte range in its object is its own line.
      const rows = (await sql`
        SELECT e.id, e.byte_start::int AS s, e.byte_length AS l, o.key, o.version_id
        FROM ${sql(`${names.schema}.events`)} e JOIN ${sql(`${names.schema}.objects`)} o USING (object_id)
        ORDER BY random() LIMIT 5`) as { id: string; s: number; l: number; key: string; version_id: string }[];
      for (const row of rows) {
        const part = await s3.send(
          new GetObjectCommand({
            Bucket: "svc-audit",
            Key: row.key,
            VersionId: row.version_id,
            Range: `bytes=${row.s}-${row.s + row.l - 1}`,
          }),
        );
        expect(JSON.parse((await bodyOf(part)).toString()).id).toBe(row.id);
      }

      // Offsets are committed through the last record of every partition.
      const ends = new Map<number, bigint>();
      for (const b of batches) ends.set(b.partition, b.lastOffset + 1n);
      const committed = await committedOffsets(names.groupId, names.topic);
      for (const [partition, end] of ends) expect(committed[partition]).toBe(end);

      const metrics = await (await fetch(`${consumer.metricsUrl}/metrics`)).text();
      expect(metrics).toContain("svc_audit_writer_events_indexed_total 600");
      expect(metrics).toContain("svc_audit_writer_events_duplicate_total 30");
      const health = await fetch(`${consumer.metricsUrl}/health`);
      expect(health.status).toBe(200);
    } finally {
      await consumer.stop();
    }
    expect(await consumer.done).toBeUndefined();
  });

  test("SVC_AUDIT_WRITE_CONCURRENCY=1: batches of six partitions are written one at a time, and every one is written", async () => {
    const own = testNames("slots");
    await createTopic(addresses.brokers, own.topic, 6);
    const consumer = await startConsumer(
      consumerConfig(addresses, own, { SVC_AUDIT_WRITE_CONCURRENCY: "1", SVC_AUDIT_BATCH_MAX_RECORDS: "25" }),
    );
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    try {
      await producer.send(own.topic, makeLines(600));
      await waitFor(
        "600 records written",
        async () => (batches.reduce((n, b) => n + b.records, 0) >= 600 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      expect(new Set(batches.map((b) => b.partition)).size).toBeGreaterThan(1);
      // No two writes overlapped: each began after the one before it ended.
      const spans = batches.map((b) => [b.writeStartedAt, b.writeEndedAt] as const).sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++) {
        expect(spans[i]?.[0] as number).toBeGreaterThanOrEqual(spans[i - 1]?.[1] as number);
      }
      expect((await indexFacts(sql, own.schema)).events).toBe(600);
    } finally {
      await consumer.stop();
      await deleteTopic(addresses.brokers, own.topic);
      await dropSchema(sql, own.schema);
    }
  });

  test("stop() writes the open batches and commits before leaving", async () => {
    const own = { ...names, groupId: `${names.groupId}-stop`, keyPrefix: `${names.keyPrefix}stop/` };
    const consumer = await startConsumer(consumerConfig(addresses, own, { SVC_AUDIT_BATCH_MAX_AGE_MS: "600000" }));
    let read = 0;
    try {
      await waitFor(
        "partitions assigned",
        async () => (consumer.assignedPartitions().length === 6 ? true : undefined),
        {
          timeoutMs: 20_000,
        },
      );
      // This group starts from the earliest offset: 630 records are already in the topic.
      await waitFor(
        "records read",
        async () => {
          read = await counted(consumer.metrics.recordsRead);
          return read >= 630 ? true : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(await listVersions(s3, "svc-audit", own.keyPrefix)).toEqual([]);
    } finally {
      await consumer.stop();
    }
    const versions = await listVersions(s3, "svc-audit", own.keyPrefix);
    expect(versions.length).toBeGreaterThan(0);
    const committed = await committedOffsets(own.groupId, names.topic);
    const total = committed.reduce((n, o) => n + (o > 0n ? o : 0n), 0n);
    expect(total).toBe(630n);
  });
  test("a batch that can never be written stops the consumer and commits nothing", async () => {
    const own = { ...names, groupId: `${names.groupId}-fail`, keyPrefix: `${names.keyPrefix}fail/` };
    const consumer = await startConsumer(
      consumerConfig(addresses, own, { SVC_AUDIT_BUCKET: "svc-no-such-bucket-qc", SVC_AUDIT_LOG_LEVEL: "silent" }),
    );
    await producer.send(names.topic, makeLines(10));
    const error = await rejectionOf(consumer.done, QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
    expect(error.canRetry).toBe(false);
    const committed = await committedOffsets(own.groupId, names.topic);
    expect(committed.length).toBe(6);
    expect(committed.every((offset) => offset < 0n)).toBe(true);
    await consumer.stop();
  });
});
