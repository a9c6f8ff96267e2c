/**
 * The export's runs (docs/audit-storage.md, "Pages and exports"): index rows whose lines lie back to back in one
 * object version are read and passed on as one span. Whatever breaks a run — another object, another version of a
 * retried batch, another tenant's line, an id stored twice in a batch, a filter, a step boundary, a gzip object —
 * the export is byte for byte the listed pages; a run whose bytes do not hold what the index says fails; fresh tail
 * records merge with no gap and no duplicate.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { AuditApiError, AuditQueries, IndexReader, PageTokens, TailStore, VersionReader } from "../index.ts";
import type { AuditQuery } from "../src/query-request.ts";
import { MARK_BYTES } from "../src/run-reader.ts";
import {
  byTimeThenId,
  insertIndexRows,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("runs");
const { names, sql, s3 } = storage;
const tenant = "tenant-runs";
const T0 = Date.parse("2026-07-07T07:00:00Z");
const DAY = { start: "2026-07-07T00:00:00Z", end: "2026-07-08T00:00:00Z" };
const BIG_DAY = { start: "2026-07-09T00:00:00Z", end: "2026-07-10T00:00:00Z" };
const BAD_DAY = { start: "2026-07-11T00:00:00Z", end: "2026-07-12T00:00:00Z" };
const limits = {
  defaultPageSize: 7,
  maxPageSize: 100,
  maxExportEvents: 100_000,
  maxExportBytes: 64 << 20,
  rangeMergeBytes: 0,
};
/** Our tenant's records of DAY, each once. */
let stored: TestRecord[] = [];
let big: TestRecord[] = [];

/** Time slot `slot` of DAY: one second each. */
const at = (slot: number) => T0 + slot * 1000;
const record = (id: string, slot: number, extra: Partial<TestRecord> = {}) =>
  sampleRecord(id, tenant, at(slot), {
    principal_id: slot % 4 === 0 ? "svc-b" : "svc-a",
    // Some records outside the `index/` prefix, so a resource filter cuts runs too.
    ...(slot % 7 === 3 ? { resource: "other/x" } : {}),
    ...extra,
  });

beforeAll(async () => {
  await storage.create();
  // A and B take turns in blocks of ten seconds, so each block is a run and the export switches objects every ten
  // rows. A holds another tenant's line (cuts its third block) and one id twice (not indexed again: a gap).
  const a: TestRecord[] = [];
  for (let i = 0; i < 40; i++) a.push(record(`a-${String(i).padStart(2, "0")}`, Math.floor(i / 10) * 20 + (i % 10)));
  a.splice(25, 0, sampleRecord("other-1", "tenant-other", at(45)));
  a.splice(34, 0, a[33] as TestRecord);
  const b: TestRecord[] = [];
  for (let j = 0; j < 50; j++)
    b.push(record(`b-${String(j).padStart(2, "0")}`, Math.floor(j / 10) * 20 + 10 + (j % 10)));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 0, 0n, a));
  // B first with 40 records, then retried with 50 (the same key, a second version): its first 40 are indexed in
  // version 1, the last 10 in version 2.
  expect(await storeBatch(sql, s3, names, sealBatch(names.topic, 1, 0n, b.slice(0, 40)))).toBe(40);
  expect(await storeBatch(sql, s3, names, sealBatch(names.topic, 1, 0n, b))).toBe(10);
  const c = Array.from({ length: 10 }, (_, i) => record(`c-${i}`, 100 + i));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 2, 0n, c), "gzip");
  stored = [...a.filter((r) => r.tenant_id === tenant), ...b, ...c]
    .filter((r, i, all) => all.findIndex((s) => s.id === r.id) === i)
    .sort(byTimeThenId);
  expect(stored).toHaveLength(100);
  // A batch large enough that its one run is cut into several chunks (each about 1 MiB).
  const bigStart = Date.parse(`${BIG_DAY.start.slice(0, 10)}T01:00:00Z`);
  big = Array.from({ length: 9_000 }, (_, i) =>
    sampleRecord(`big-${String(i).padStart(5, "0")}`, tenant, bigStart + i, {
      resource: `index/${"x".repeat(i % 300)}`,
    }),
  );
  await storeBatch(sql, s3, names, sealBatch(names.topic, 3, 0n, big));
}, 60_000);

afterAll(() => storage.remove());

const queriesWith = (step?: number, tail?: TailStore) =>
  new AuditQueries(
    new IndexReader(sql, names.schema),
    new VersionReader(s3),
    new PageTokens("k".repeat(32)),
    limits,
    tail,
    undefined,
    step,
  );

async function exported(queries: AuditQueries, query: AuditQuery) {
  const chunks: Uint8Array[] = [];
  let count = 0;
  for await (const chunk of queries.exportChunks(tenant, query)) {
    // Every chunk is whole lines, and says how many.
    expect(chunk.data.at(-1)).toBe(0x0a);
    expect(chunk.totalCount).toBe(chunk.data.filter((byte) => byte === 0x0a).length);
    chunks.push(chunk.data);
    count += chunk.totalCount;
  }
  return { text: Buffer.concat(chunks).toString("utf8"), count, chunks };
}

/** The JSONL of every page of a list (pages of 7), as the API answers them. */
async function listed(queries: AuditQueries, query: AuditQuery): Promise<string> {
  let text = "";
  let pageToken = "";
  do {
    const page = await queries.list(tenant, { query, pageSize: 7, pageToken });
    for (const line of page.lines) text += `${Buffer.from(line).toString("utf8")}\n`;
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return text;
}

const jsonl = (records: readonly TestRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

test("the index answers a step as runs: one per block of back-to-back lines of one version", async () => {
  const { runs, rows } = await new IndexReader(sql, names.schema).runs(tenant, DAY, undefined, 1_000);
  expect(rows).toBe(100);
  expect(runs.reduce((sum, run) => sum + run.lines, 0)).toBe(100);
  // A: 4 blocks, the third cut by another tenant's line, the fourth by the id stored twice; B: 5 blocks, the last
  // in the retried version; C: one.
  expect(runs.map((run) => run.lines)).toEqual([10, 10, 10, 10, 5, 5, 10, 3, 7, 10, 10, 10]);
  expect(new Set(runs.map((run) => `${run.key} ${run.versionId}`)).size).toBe(4);
  expect(runs.at(-1)?.last.id).toBe("c-9");
  expect(runs.at(-1)?.last.time).toBe(`${new Date(at(109)).toISOString().slice(0, 19)}.000000Z`);
});

test.each([3, 7, 10, 64, undefined])(
  "export step %p: runs across objects, versions and a gzip object are the listed pages, byte for byte",
  async (step) => {
    const queries = queriesWith(step);
    const { text, count } = await exported(queries, DAY);
    expect(count).toBe(100);
    expect(text).toBe(await listed(queries, DAY));
    expect(text).toBe(jsonl(stored));
  },
);

test("a filter cuts runs (principal, resource prefix): still the listed pages", async () => {
  for (const step of [5, undefined]) {
    const queries = queriesWith(step);
    const principal = { ...DAY, principalId: "svc-a" };
    const a = await exported(queries, principal);
    expect(a.text).toBe(await listed(queries, principal));
    const svcA = stored.filter((r) => r.principal_id === "svc-a");
    expect(svcA.length).toBeLessThan(stored.length);
    expect(a.text).toBe(jsonl(svcA));
    expect(a.count).toBe(svcA.length);
    const prefixed = { ...DAY, resourcePrefix: "index/" };
    const indexed = stored.filter((r) => r.resource.startsWith("index/"));
    expect(indexed.length).toBeLessThan(stored.length);
    const p = await exported(queries, prefixed);
    expect(p.text).toBe(await listed(queries, prefixed));
    expect(p.text).toBe(jsonl(indexed));
  }
});

test("runs of 9 000 lines are cut into chunks of ½–1 MiB at line ends; the unary export is the same bytes", async () => {
  const queries = queriesWith();
  const { text, count, chunks } = await exported(queries, BIG_DAY);
  expect(count).toBe(9_000);
  expect(text).toBe(jsonl(big));
  expect(chunks.length).toBeGreaterThan(1);
  expect(chunks[0]?.length).toBeGreaterThanOrEqual(1 << 20);
  for (const chunk of chunks.slice(0, -1)) {
    expect(chunk.length).toBeGreaterThanOrEqual(1 << 19);
    expect(chunk.length).toBeLessThan((1 << 20) + MARK_BYTES + 1024);
  }
  const unary = await queries.export(tenant, BIG_DAY);
  expect(unary.totalCount).toBe(9_000);
  expect(Buffer.from(unary.data).toString("utf8")).toBe(text);
});

test("fresh tail records between runs (one of them indexed already): every event once, in order", async () => {
  const tail = new TailStore();
  // Fresh records inside B's second block and after everything; b-15 is indexed and also in the tail (counted once).
  // b-14x shares b-14's time (the id orders them).
  const fresh = [record("b-14x", 34), record("f-2", 200), record("f-3", 35)];
  const b15 = stored.find((r) => r.id === "b-15") as TestRecord;
  [...fresh, b15].forEach((r, i) => {
    tail.add(9, BigInt(i), Buffer.from(JSON.stringify(r)));
  });
  const expected = [...stored, ...fresh].sort(byTimeThenId);
  for (const step of [4, undefined]) {
    const queries = queriesWith(step, tail);
    const { text, count } = await exported(queries, DAY);
    expect(count).toBe(103);
    expect(text).toBe(jsonl(expected));
    expect(text).toBe(await listed(queries, DAY));
  }
});

/** Index rows made by hand over the lines of a stored batch, for another tenant on BAD_DAY. */
async function handRows(badTenant: string, rows: { id: string; start: number; length: number }[]): Promise<void> {
  const lines = Array.from({ length: 3 }, (_, i) =>
    sampleRecord(`bad-${badTenant}-${i}`, "tenant-none", Date.parse(BAD_DAY.start) + i),
  );
  const batch = sealBatch(names.topic, 4, 0n, lines);
  await storeBatch(sql, s3, names, batch);
  const [object] = (await sql.unsafe(`SELECT max(object_id)::text AS object_id FROM "${names.schema}".objects`)) as {
    object_id: string;
  }[];
  for (const [i, row] of rows.entries()) {
    await insertIndexRows(
      sql,
      names.schema,
      `SELECT $1, $2, $3::timestamptz, 'p', 'a', 'OK', 'r', $4::bigint, $5::bigint, $6::int`,
      [
        row.id,
        badTenant,
        new Date(Date.parse(BAD_DAY.start) + 3_600_000 + i).toISOString(),
        object?.object_id,
        row.start,
        row.length,
      ],
    );
  }
}

/** The byte lengths of the three lines `handRows` stores for `badTenant`. */
const lineLengths = (badTenant: string) =>
  Array.from(
    { length: 3 },
    (_, i) =>
      JSON.stringify(sampleRecord(`bad-${badTenant}-${i}`, "tenant-none", Date.parse(BAD_DAY.start) + i)).length,
  );

async function exportFailure(badTenant: string): Promise<AuditApiError> {
  const drain = async () => {
    let count = 0;
    for await (const chunk of queriesWith().exportChunks(badTenant, BAD_DAY)) count += chunk.totalCount;
    return count;
  };
  return rejectionOf(drain(), AuditApiError);
}

test("a run whose span holds more lines than the index says: AUDIT_API_OBJECT_READ_FAILED", async () => {
  const badTenant = "tenant-bad-count";
  const [l0, l1, l2] = lineLengths(badTenant) as [number, number, number];
  // Row 1 claims lines 0 and 1 as one (its range spans both), row 2 line 2: back to back, one run of 2 rows.
  await handRows(badTenant, [
    { id: `bad-${badTenant}-0`, start: 0, length: l0 + 1 + l1 },
    { id: `bad-${badTenant}-2`, start: l0 + 1 + l1 + 1, length: l2 },
  ]);
  const error = await exportFailure(badTenant);
  expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
  expect(error.message).toContain("3 lines where the index has 2 events");
});

test.each(["first", "last"])(
  "a run whose %s line is not the event the index names: AUDIT_API_OBJECT_READ_FAILED",
  async (which) => {
    const badTenant = `tenant-bad-${which}`;
    const [l0, l1] = lineLengths(badTenant) as [number, number, number];
    const wrong = `wrong-${which}`;
    await handRows(badTenant, [
      { id: which === "first" ? wrong : `bad-${badTenant}-0`, start: 0, length: l0 },
      { id: which === "last" ? wrong : `bad-${badTenant}-1`, start: l0 + 1, length: l1 },
    ]);
    const error = await exportFailure(badTenant);
    expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
    expect(error.message).toContain(wrong);
  },
);

test("ids holding a newline and times after 2106 (text, not float µs) export as listed", async () => {
  const odd = "tenant-runs-odd";
  const late = Date.parse("2200-02-02T02:02:02.123Z");
  const records = Array.from({ length: 12 }, (_, i) =>
    sampleRecord(i % 3 === 0 ? `odd\n${i}` : `odd-${String(i).padStart(2, "0")}`, odd, i < 6 ? T0 + i : late + i),
  );
  await storeBatch(sql, s3, names, sealBatch(names.topic, 5, 0n, records));
  const range = { start: DAY.start, end: "2201-01-01T00:00:00Z" };
  for (const step of [5, undefined]) {
    const queries = queriesWith(step);
    const chunks: Uint8Array[] = [];
    for await (const chunk of queries.exportChunks(odd, range)) chunks.push(chunk.data);
    let listedText = "";
    let pageToken = "";
    do {
      const page = await queries.list(odd, { query: range, pageSize: 5, pageToken });
      for (const line of page.lines) listedText += `${Buffer.from(line).toString("utf8")}\n`;
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(Buffer.concat(chunks).toString("utf8")).toBe(listedText);
    expect(listedText).toBe(jsonl([...records].sort(byTimeThenId)));
  }
});
