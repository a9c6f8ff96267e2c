/**
 * The block cache of object versions (src/block-cache.ts) in front of the presigned reader, on the stack's MinIO
 * through a counting proxy: ranges within and across blocks answered exactly, a block read once served from memory,
 * concurrent reads sharing one GET, eviction within the budget, a failed GET not kept — and an export reading past
 * the cache while a list's page goes through it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { inTempDir, rejectionOf } from "@svc/testkit";
import {
  AuditApiError,
  AuditQueries,
  BlockCache,
  DiskBlocks,
  EXTENT_BLOCKS,
  IndexReader,
  PageTokens,
  VersionReader,
} from "../index.ts";
import { minioProxy, s3At } from "./support/minio-proxy.ts";
import { sampleRecord, sealBatch, storeBatch, testStorage } from "./support/stored-data.ts";

const BUCKET = "svc-audit";
const storage = testStorage("blocks");
const { names, sql, s3 } = storage;
const key = `${names.keyPrefix}blocks.bin`;
/** 10 blocks of 1 KiB and a short last one. */
const content = Buffer.from(Array.from({ length: 10 * 1024 + 300 }, (_, i) => (i * 7 + (i >> 10)) & 0xff));
let versionId: string;
const proxies: { stop(): void }[] = [];

function cached(
  blockBytes: number,
  maxBytes: number,
  answer: Parameters<typeof minioProxy>[0] = () => undefined,
  disk?: DiskBlocks,
) {
  const proxy = minioProxy(answer);
  proxies.push(proxy);
  const reader = new VersionReader(s3At(proxy.url), { maxAttempts: 1 });
  return { proxy, cache: new BlockCache(reader, maxBytes, blockBytes, disk) };
}

/** The queries' limits: 5-event pages, no merging of neighbouring ranges (each run its own read). */
const limits = {
  defaultPageSize: 5,
  maxPageSize: 100,
  maxExportEvents: 100,
  maxExportBytes: 1 << 20,
  rangeMergeBytes: 0,
};

/** The query core over the test's index and `reader`, lists through `cache`, exports in `exportStep`-row steps. */
function queriesThrough(reader: VersionReader, cache?: BlockCache, exportStep?: number): AuditQueries {
  const tokens = new PageTokens("k".repeat(32));
  return new AuditQueries(new IndexReader(sql, names.schema), reader, tokens, limits, undefined, cache, exportStep);
}

function same(bytes: Uint8Array, start: number, end: number): void {
  expect(Buffer.from(bytes).equals(content.subarray(start, end))).toBe(true);
}

beforeAll(async () => {
  await storage.create();
  const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: content }));
  versionId = put.VersionId as string;
});

afterAll(async () => {
  for (const proxy of proxies) proxy.stop();
  await storage.remove();
});

test("ranges within and across blocks, and the short last block, answered exactly; a block read once is not read again", async () => {
  const { proxy, cache } = cached(1024, 1 << 20);
  const ranges: [number, number][] = [
    [0, 10],
    [1000, 1100], // across blocks 0 and 1 (block 0 cached: one GET for block 1)
    [2048, 2048 + 3 * 1024 + 5], // blocks 2..5, one GET
    [10 * 1024 + 100, 10 * 1024 + 300], // the short last block
  ];
  for (const [start, end] of ranges) same(await cache.read(BUCKET, key, versionId, { start, end }), start, end);
  expect(proxy.requests).toBe(4);
  const before = proxy.requests;
  for (const [start, end] of ranges) same(await cache.read(BUCKET, key, versionId, { start, end }), start, end);
  same(await cache.read(BUCKET, key, versionId, { start: 1500, end: 5000 }), 1500, 5000);
  expect(proxy.requests).toBe(before);
  expect(cache.bytes).toBe(6 * 1024 + 300); // blocks 0–5 and the short block 10
});

test("concurrent reads of one block share its GET", async () => {
  const { proxy, cache } = cached(1024, 1 << 20);
  const reads = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      cache.read(BUCKET, key, versionId, { start: 3072 + i * 10, end: 3072 + i * 10 + 50 }),
    ),
  );
  reads.forEach((bytes, i) => {
    same(bytes, 3072 + i * 10, 3072 + i * 10 + 50);
  });
  expect(proxy.requests).toBe(1);
});

test("the budget holds: the least recently used blocks go, and are read again when asked for", async () => {
  const { proxy, cache } = cached(1024, 3 * 1024);
  for (const block of [0, 1, 2, 3])
    await cache.read(BUCKET, key, versionId, { start: block * 1024, end: block * 1024 + 1 });
  expect(cache.bytes).toBe(3 * 1024);
  expect(proxy.requests).toBe(4);
  same(await cache.read(BUCKET, key, versionId, { start: 3 * 1024, end: 3 * 1024 + 9 }), 3 * 1024, 3 * 1024 + 9);
  expect(proxy.requests).toBe(4); // block 3: still there
  same(await cache.read(BUCKET, key, versionId, { start: 0, end: 9 }), 0, 9);
  expect(proxy.requests).toBe(5); // block 0: pushed out by block 3, read again
});

test("a failed GET is reported and not kept: the next read of the block asks again", async () => {
  const { proxy, cache } = cached(1024, 1 << 20, (n) =>
    n === 1 ? new Response("<Error><Code>SlowDown</Code><Message>later</Message></Error>", { status: 503 }) : undefined,
  );
  const error = await rejectionOf(cache.read(BUCKET, key, versionId, { start: 10, end: 20 }), AuditApiError);
  expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
  expect(error.canRetry).toBe(true);
  expect(cache.bytes).toBe(0);
  same(await cache.read(BUCKET, key, versionId, { start: 10, end: 20 }), 10, 20);
  expect(proxy.requests).toBe(2);
});

test("with a disk tier, a miss reads its whole extent to disk; a cache that never read the blocks reads them from there", () =>
  inTempDir("block-disk", async (dir) => {
    expect(EXTENT_BLOCKS).toBe(8);
    const settings = { maxBytes: 1 << 20, blockBytes: 1024, report: () => {} };
    const first = await DiskBlocks.open(dir, settings);
    const { proxy: firstProxy, cache: firstCache } = cached(1024, 1 << 20, undefined, first);
    same(await firstCache.read(BUCKET, key, versionId, { start: 1024, end: 3 * 1024 }), 1024, 3 * 1024); // blocks 1–2
    await first.idle();
    expect(firstProxy.requests).toBe(1);
    expect(first.stats.written).toBe(8); // blocks 0–7: the extent of 8 around them
    expect(firstCache.bytes).toBe(2 * 1024); // only the asked-for blocks in memory

    // The next process: a new memory cache over the same directory.
    await first.close();
    const next = await DiskBlocks.open(dir, settings);
    const { proxy, cache } = cached(1024, 1 << 20, undefined, next);
    same(await cache.read(BUCKET, key, versionId, { start: 1500, end: 2500 }), 1500, 2500);
    // Blocks 0–6: 1 and 2 now in memory, the others on disk.
    same(await cache.read(BUCKET, key, versionId, { start: 100, end: 6 * 1024 + 100 }), 100, 6 * 1024 + 100);
    expect(proxy.requests).toBe(0);
    expect(next.stats.hits).toBe(7);
    // Blocks 9 and 10 (the short last one): one GET of extent 8–15, answered up to the object's end.
    const end = content.length;
    same(await cache.read(BUCKET, key, versionId, { start: 9 * 1024 + 5, end }), 9 * 1024 + 5, end);
    expect(proxy.requests).toBe(1);
    await next.idle();
    expect(next.count).toBe(11); // blocks 0–10

    // A damaged slot is a miss: its block comes from S3 again, exactly.
    const offset = next.offsetOf(`${BUCKET}\u0000${key}\u0000${versionId}\u00001024:2`) as number;
    const slab = join(dir, "blocks-1024.slab");
    const fd = openSync(slab, "r+");
    writeSync(fd, Buffer.from([0xff, 0xfe]), 0, 2, offset + 100);
    closeSync(fd);
    const { proxy: lastProxy, cache: last } = cached(1024, 1 << 20, undefined, next);
    same(await last.read(BUCKET, key, versionId, { start: 2 * 1024, end: 2 * 1024 + 500 }), 2 * 1024, 2 * 1024 + 500);
    expect(lastProxy.requests).toBe(1);
    expect(next.stats.failures).toBe(1);
    await next.close();
  }));

test("a range past the object's end comes back short (the reader reports it), with or without a disk tier", () =>
  inTempDir("block-disk", async (dir) => {
    const disk = await DiskBlocks.open(dir, { maxBytes: 1 << 20, blockBytes: 1024, report: () => {} });
    for (const tier of [undefined, disk]) {
      const { cache } = cached(1024, 1 << 20, undefined, tier);
      // Blocks 10 (the short last one) and 11 (past the end): 200 bytes of the 1,974 asked for.
      const start = 10 * 1024 + 100;
      const bytes = await cache.read(BUCKET, key, versionId, { start, end: 12 * 1024 + 50 });
      same(bytes, start, content.length);
    }
    await disk.close();
  }));

test("a budget or block size of 0 is refused", () => {
  const reader = new VersionReader(s3);
  expect(() => new BlockCache(reader, 0)).toThrow(RangeError);
  expect(() => new BlockCache(reader, 1024, 0)).toThrow(RangeError);
});

test("a list's page is read through the cache; an export reads past it", async () => {
  const tenant = "tenant-blocks";
  const T0 = Date.parse("2026-05-05T05:05:05Z");
  const records = Array.from({ length: 20 }, (_, i) => sampleRecord(`b-${String(i).padStart(2, "0")}`, tenant, T0 + i));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 0, 0n, records));
  const query = { start: "2026-05-05T00:00:00Z", end: "2026-05-06T00:00:00Z" };
  const make = () => {
    const reader = new VersionReader(s3);
    const cache = new BlockCache(reader, 1 << 20);
    return { cache, queries: queriesThrough(reader, cache) };
  };
  const exporting = make();
  const exported = await exporting.queries.export(tenant, query);
  expect(exported.totalCount).toBe(20);
  expect(exporting.cache.bytes).toBe(0);
  const listing = make();
  const page = await listing.queries.list(tenant, { query, pageSize: 5, pageToken: "" });
  expect(page.lines.map((line) => JSON.parse(new TextDecoder().decode(line)).id)).toEqual(
    records.slice(0, 5).map((r) => r.id),
  );
  expect(listing.cache.bytes).toBeGreaterThan(0);
});

test("a gzip object is read whole once: a list's later pages and an export's steps in it share that GET and decode", async () => {
  const tenant = "tenant-gzip";
  const T0 = Date.parse("2026-06-06T06:06:06Z");
  const records = Array.from({ length: 20 }, (_, i) => sampleRecord(`g-${String(i).padStart(2, "0")}`, tenant, T0 + i));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 1, 0n, records), "gzip");
  const query = { start: "2026-06-06T00:00:00Z", end: "2026-06-07T00:00:00Z" };
  const ids = (lines: Uint8Array[]) => lines.map((line) => JSON.parse(new TextDecoder().decode(line)).id);

  const listProxy = minioProxy(() => undefined);
  const exportProxy = minioProxy(() => undefined);
  proxies.push(listProxy, exportProxy);
  const listReader = new VersionReader(s3At(listProxy.url), { maxAttempts: 1 });
  const cache = new BlockCache(listReader, 1 << 20);
  const listing = queriesThrough(listReader, cache, 5);
  let pageToken = "";
  const listed: string[] = [];
  do {
    const page = await listing.list(tenant, { query, pageSize: 5, pageToken });
    listed.push(...ids(page.lines));
    pageToken = page.nextPageToken;
  } while (pageToken);
  expect(listed).toEqual(records.map((r) => r.id));
  expect(listProxy.requests).toBe(1);
  const decodedBytes = records.reduce((sum, r) => sum + JSON.stringify(r).length + 1, 0);
  expect(cache.bytes).toBe(decodedBytes);

  // An export (5-row steps: four over this object) keeps its own decoded copy, and the list cache is not touched.
  const exporting = queriesThrough(new VersionReader(s3At(exportProxy.url), { maxAttempts: 1 }), undefined, 5);
  const chunks: Uint8Array[] = [];
  for await (const answer of exporting.exportChunks(tenant, query)) chunks.push(answer.data);
  const exported = Buffer.concat(chunks).toString().trimEnd().split("\n");
  expect(exported.map((line) => JSON.parse(line).id)).toEqual(records.map((r) => r.id));
  expect(exportProxy.requests).toBe(1);
});

test("a decoded gzip object over the budget is kept alone, and a failed whole read is not kept", async () => {
  const records = Array.from({ length: 30 }, (_, i) =>
    sampleRecord(`w-${i}`, "tenant-whole", Date.UTC(2026, 6, 7) + i),
  );
  await storeBatch(sql, s3, names, sealBatch(names.topic, 2, 0n, records), "gzip");
  const [row] = await sql.unsafe(
    `SELECT key, version_id FROM "${names.schema}".objects WHERE topic = $1 AND partition = 2`,
    [names.topic],
  );
  const { key: gzKey, version_id: gzVersion } = row as { key: string; version_id: string };
  const { proxy, cache } = cached(1024, 100, (n) =>
    n === 1 ? new Response("<Error><Code>SlowDown</Code><Message>later</Message></Error>", { status: 503 }) : undefined,
  );
  const error = await rejectionOf(cache.whole(BUCKET, gzKey, gzVersion), AuditApiError);
  expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
  expect(cache.bytes).toBe(0);
  const decoded = await cache.whole(BUCKET, gzKey, gzVersion);
  expect(Buffer.from(decoded).toString().split("\n")[0]).toBe(JSON.stringify(records[0]));
  expect(cache.bytes).toBe(decoded.length); // over the 100-byte budget, but the newest entry stays
  await cache.whole(BUCKET, gzKey, gzVersion);
  expect(proxy.requests).toBe(2);
});
