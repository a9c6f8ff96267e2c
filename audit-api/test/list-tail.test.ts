/**
 * A list over the index and a freshness tail fed by hand (no Kafka): every event once, in (time, id) order, exact
 * totals — through the one-statement path (a tail up to TAIL_KEYS_PER_STATEMENT records of the query) and through
 * the transaction taken for a larger tail.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AuditQueries, IndexReader, PageTokens, TailStore, VersionReader } from "../index.ts";
import { TAIL_KEYS_PER_STATEMENT } from "../src/index-reader.ts";
import { RollupSums } from "../src/rollup-sums.ts";
import {
  byTimeThenId,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("listtail");
const { names, sql, s3 } = storage;
const T0 = Date.parse("2026-07-07T07:00:00Z");
const query = { start: "2026-07-07T00:00:00Z", end: "2026-07-08T00:00:00Z" };
const limits = {
  defaultPageSize: 5,
  maxPageSize: 1000,
  maxExportEvents: 100,
  maxExportBytes: 1 << 20,
  rangeMergeBytes: 0,
};
const tokens = new PageTokens("k".repeat(32));

/** Every page of the tenant's list: the ids in order and each page's total. */
async function listAll(queries: AuditQueries, tenant: string, pageSize: number) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let pageToken = "";
  do {
    const page = await queries.list(tenant, { query, pageSize, pageToken });
    for (const line of page.lines) ids.push((JSON.parse(new TextDecoder().decode(line)) as TestRecord).id);
    totals.add(page.totalCount);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return { ids, totals: [...totals] };
}

/** The index holds `indexed`; the tail holds `tail` (offsets above partition 0's mark of -1: none dropped). */
async function setUp(indexed: TestRecord[], tail: TestRecord[]) {
  await storeBatch(sql, s3, names, sealBatch(names.topic, 0, 0n, indexed));
  const store = new TailStore();
  tail.forEach((record, i) => {
    store.add(5, BigInt(i), Buffer.from(JSON.stringify(record)));
  });
  return new AuditQueries(
    new IndexReader(sql, names.schema, new RollupSums()),
    new VersionReader(s3),
    tokens,
    limits,
    store,
  );
}

beforeAll(() => storage.create());
afterAll(() => storage.remove());

test("a small tail: one statement answers count, page and the tail's lookup — every event once, in order", async () => {
  const tenant = "tenant-small-tail";
  // Interleaved times; the tail holds 4 records the index holds too (indexed meanwhile) and 12 it does not.
  const indexed = Array.from({ length: 20 }, (_, i) =>
    sampleRecord(`i-${String(i).padStart(2, "0")}`, tenant, T0 + i * 10),
  );
  const fresh = Array.from({ length: 12 }, (_, i) =>
    sampleRecord(`f-${String(i).padStart(2, "0")}`, tenant, T0 + i * 17 + 3),
  );
  const tail = [...fresh, ...[indexed[0], indexed[7], indexed[8], indexed[19]].map((r) => r as TestRecord)];
  const queries = await setUp(indexed, tail);
  const expected = [...indexed, ...fresh].sort(byTimeThenId).map((r) => r.id);
  for (const pageSize of [1, 3, 7, 32, 33, 100]) {
    const { ids, totals } = await listAll(queries, tenant, pageSize);
    expect(ids).toEqual(expected);
    expect(totals).toEqual([32]);
  }
  const other = await queries.list("tenant-nobody", { query, pageSize: 5, pageToken: "" });
  expect(other.totalCount).toBe(0);
});

test("a tail above the one-statement lookup: the transaction path answers the same", async () => {
  const tenant = "tenant-large-tail";
  // indexed[29] sorts after every fresh record: the tail's lookup finds it in its second chunk of keys.
  const indexed = Array.from({ length: 30 }, (_, i) =>
    sampleRecord(`j-${String(i).padStart(5, "0")}`, tenant, T0 + i * 1100),
  );
  const fresh = Array.from({ length: TAIL_KEYS_PER_STATEMENT + 5 }, (_, i) =>
    sampleRecord(`g-${String(i).padStart(5, "0")}`, tenant, T0 + i * 3 + 1),
  );
  const queries = await setUp(indexed, [...fresh, indexed[3] as TestRecord, indexed[29] as TestRecord]);
  const expected = [...indexed, ...fresh].sort(byTimeThenId).map((r) => r.id);
  const { ids, totals } = await listAll(queries, tenant, 1000);
  expect(ids).toEqual(expected);
  expect(totals).toEqual([expected.length]);
});

test("countAndPage refuses more tail keys than one statement looks up", async () => {
  const reader = new IndexReader(sql, names.schema);
  const keys = Array.from({ length: TAIL_KEYS_PER_STATEMENT + 1 }, (_, i) => ({
    time: "2026-07-07T07:00:00.000000Z",
    id: `k${i}`,
  }));
  await expect(reader.countAndPage("t", query, undefined, 1, keys)).rejects.toThrow(RangeError);
});
