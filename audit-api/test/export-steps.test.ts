/**
 * The streaming export across index steps: whatever the step (a few rows, the default), the JSONL is every stored
 * event once, in (time, id) order, as written — across step boundaries, objects and a retried (duplicate) batch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AuditQueries, IndexReader, PageTokens, VersionReader } from "../index.ts";
import {
  byTimeThenId,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("steps");
const { names, sql, s3 } = storage;
const tenant = "tenant-steps";
const T0 = Date.parse("2026-06-06T06:00:00Z");
const query = { start: "2026-06-06T00:00:00Z", end: "2026-06-07T00:00:00Z" };
const limits = {
  defaultPageSize: 5,
  maxPageSize: 100,
  maxExportEvents: 1000,
  maxExportBytes: 1 << 20,
  rangeMergeBytes: 0,
};
let expected: string;

beforeAll(async () => {
  await storage.create();
  // Three objects whose times interleave (a step's rows come from several objects, an object's from several
  // steps), one of them stored twice (a retried batch: its events are indexed once), and another tenant's events.
  const batches: TestRecord[][] = [0, 1, 2].map((b) =>
    Array.from({ length: 17 }, (_, i) => sampleRecord(`s-${b}-${String(i).padStart(2, "0")}`, tenant, T0 + i * 3 + b)),
  );
  for (const [b, records] of batches.entries()) {
    await storeBatch(sql, s3, names, sealBatch(names.topic, b, 0n, records));
  }
  await storeBatch(sql, s3, names, sealBatch(names.topic, 1, 0n, batches[1] ?? []));
  const others = Array.from({ length: 5 }, (_, i) => sampleRecord(`o-${i}`, "tenant-other", T0 + i));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 3, 0n, others));
  const all = batches.flat().sort(byTimeThenId);
  expect(all).toHaveLength(51);
  expected = all.map((r) => `${JSON.stringify(r)}\n`).join("");
});

afterAll(() => storage.remove());

const queriesWith = (step?: number) =>
  new AuditQueries(
    new IndexReader(sql, names.schema),
    new VersionReader(s3),
    new PageTokens("k".repeat(32)),
    limits,
    undefined,
    undefined,
    step,
  );

test.each([1, 2, 7, 50, 51, 52, undefined])("export step %p: every event once, in order, as stored", async (step) => {
  const queries = queriesWith(step);
  const chunks: Uint8Array[] = [];
  let count = 0;
  for await (const chunk of queries.exportChunks(tenant, query)) {
    chunks.push(chunk.data);
    count += chunk.totalCount;
  }
  expect(count).toBe(51);
  expect(new TextDecoder().decode(Buffer.concat(chunks))).toBe(expected);
  const unary = await queries.export(tenant, query);
  expect(unary.totalCount).toBe(51);
  expect(new TextDecoder().decode(unary.data)).toBe(expected);
});

test("a step below 1 is refused", () => {
  expect(() => queriesWith(0)).toThrow(RangeError);
});
