import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { rejectionOf, type TempDir, tempDir, waitFor } from "@svc/testkit";
import { QueueConsumerError, startConsumer } from "../index.ts";
import {
  bodyOf,
  committedOffsets,
  consumerConfig,
  counted,
  dropSchema,
  indexedIds,
  listVersions,
  makeLines,
  pipelineFixture,
  waitAllIndexed,
} from "./helpers.ts";

const { addresses, s3, sql, names, producer } = pipelineFixture("spool", { partitions: 2 });
let root: TempDir;

/** Sum of the group's committed offsets over the topic's two partitions (none committed counts 0). */
async function committedTotal(groupId: string): Promise<bigint> {
  const offsets = await committedOffsets(addresses.brokers, groupId, names.topic, 2);
  return offsets.reduce((n, o) => n + (o > 0n ? o : 0n), 0n);
}

/** The spool files under `dir` (every writer's directory), with their sizes. */
function spoolFiles(dir: string): { path: string; bytes: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, bytes: readFileSync(path).length };
    });
}

beforeAll(async () => {
  root = await tempDir("qc-spool-it");
});

afterAll(async () => {
  await root.remove();
});

describe("spooled batches (SVC_AUDIT_BATCH_SPOOL=file)", () => {
  test("a waiting batch's bytes are in its spool file; the object holds them; the files go when written, the directory at stop", async () => {
    const spoolRoot = join(root.path, "waiting");
    const own = { ...names, groupId: `${names.groupId}-wait`, keyPrefix: `${names.keyPrefix}wait/` };
    const consumer = await startConsumer(
      consumerConfig(addresses, own, { SVC_AUDIT_SPOOL_DIR: spoolRoot, SVC_AUDIT_BATCH_MAX_AGE_MS: "600000" }),
    );
    // ~800 KB over two partitions: each batch passes its 256 KiB stage, so most of its bytes are in its file.
    const lines = makeLines(2_000, 4);
    const lineBytes = lines.reduce((n, l) => n + Buffer.byteLength(l.line) + 1, 0);
    try {
      await producer.send(names.topic, lines);
      await waitFor(
        "2,000 records read",
        async () => ((await counted(consumer.metrics.recordsRead)) >= 2_000 ? true : undefined),
        { timeoutMs: 20_000 },
      );
      const files = spoolFiles(spoolRoot);
      expect(files.every((f) => f.path.includes(`-${process.pid}-`))).toBe(true);
      expect(files.reduce((n, f) => n + f.bytes, 0)).toBeGreaterThanOrEqual(lineBytes - 2 * 256 * 1024);
      const produced = new Set(lines.map((l) => l.line));
      const spooled = files.flatMap((f) =>
        readFileSync(f.path, "utf8")
          .split("\n")
          .filter((l) => l !== ""),
      );
      expect(spooled.length).toBeGreaterThan(1_000);
      expect(spooled.every((l) => produced.has(l))).toBe(true);
      expect(await listVersions(s3, "svc-audit", own.keyPrefix)).toEqual([]);
    } finally {
      await consumer.stop();
    }
    const stored: string[] = [];
    for (const version of await listVersions(s3, "svc-audit", own.keyPrefix)) {
      const answer = await s3.send(
        new GetObjectCommand({ Bucket: "svc-audit", Key: version.Key, VersionId: version.VersionId }),
      );
      stored.push(
        ...(await bodyOf(answer))
          .toString()
          .split("\n")
          .filter((l) => l !== ""),
      );
    }
    expect(stored.sort()).toEqual(lines.map((l) => l.line).sort());
    expect(await committedTotal(own.groupId)).toBe(2_000n);
    expect(readdirSync(spoolRoot)).toEqual([]);
  });

  test("its spool directory removed under a running writer: it stops with QUEUE_CONSUMER_SPOOL_FAILED, commits nothing of the batch, and the next writer stores every record", async () => {
    const own = {
      ...names,
      groupId: `${names.groupId}-gone`,
      keyPrefix: `${names.keyPrefix}gone/`,
      schema: `${names.schema}_gone`,
    };
    const spoolRoot = join(root.path, "gone");
    const consumer = await startConsumer(
      consumerConfig(addresses, own, { SVC_AUDIT_SPOOL_DIR: spoolRoot, SVC_AUDIT_LOG_LEVEL: "silent" }),
    );
    let restarted: Awaited<ReturnType<typeof startConsumer>> | undefined;
    try {
      // This group starts from the earliest offset: the 2,000 records of the test above are read and written first.
      await waitFor(
        "the first 2,000 committed",
        async () => ((await committedTotal(own.groupId)) === 2_000n ? true : undefined),
        { timeoutMs: 20_000 },
      );
      rmSync(spoolRoot, { recursive: true, force: true });
      // One tenant: one partition, so exactly one batch is open when its file cannot be written.
      const more = makeLines(30, 1);
      await producer.send(names.topic, more);
      const error = await rejectionOf(consumer.done, QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
      expect(error.canRetry).toBe(false);
      expect(await committedTotal(own.groupId)).toBe(2_000n);
      // The batch whose file could not be written is counted as dropped (Kafka keeps its records).
      expect(await counted(consumer.metrics.batchesDropped)).toBe(1);

      restarted = await startConsumer(consumerConfig(addresses, own, { SVC_AUDIT_SPOOL_DIR: spoolRoot }));
      await waitAllIndexed(sql, own.schema, 2_030, 30_000);
      const ids = await indexedIds(sql, own.schema);
      expect(more.every((l) => ids.has(l.id))).toBe(true);
      await waitFor(
        "2,030 committed",
        async () => ((await committedTotal(own.groupId)) === 2_030n ? true : undefined),
        {
          timeoutMs: 20_000,
        },
      );
    } finally {
      await consumer.stop().catch(() => {});
      await restarted?.stop();
      await dropSchema(sql, own.schema);
    }
  });
  test("a spool file gone while stopping: stop() rejects with QUEUE_CONSUMER_SPOOL_FAILED and commits nothing of it", async () => {
    const own = { ...names, groupId: `${names.groupId}-stop`, keyPrefix: `${names.keyPrefix}stop/` };
    const spoolRoot = join(root.path, "stopping");
    const consumer = await startConsumer(
      consumerConfig(addresses, own, {
        SVC_AUDIT_SPOOL_DIR: spoolRoot,
        SVC_AUDIT_BATCH_MAX_AGE_MS: "600000",
        SVC_AUDIT_LOG_LEVEL: "silent",
      }),
    );
    // The topic holds the 2,030 records of the tests above; this group reads them all into open batches.
    await waitFor(
      "2,030 records read",
      async () => ((await counted(consumer.metrics.recordsRead)) >= 2_030 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    rmSync(spoolRoot, { recursive: true, force: true });
    const error = await rejectionOf(consumer.stop(), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
    expect(await committedTotal(own.groupId)).toBe(0n);
    expect(await listVersions(s3, "svc-audit", own.keyPrefix)).toEqual([]);
  });
});
