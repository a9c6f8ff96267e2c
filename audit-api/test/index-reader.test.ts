import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureIndexSchema, writeBatchIndex } from "@svc/queue-consumer";
import { seededRandom, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { IndexReader, inPageOrder, nearestMinutes, wholeHours, wholeMinutes } from "../src/index-reader.ts";
import type { AuditQuery } from "../src/query-request.ts";
import { RollupSums } from "../src/rollup-sums.ts";
import { insertIndexRows, sealBatch, storageNames, type TestRecord } from "./support/stored-data.ts";

const sql = new SQL({ url: stackEnv().postgresUrl, max: 2 });
const { schema, topic } = storageNames("counts");
const reader = new IndexReader(sql, schema);
const TENANT = "tenant-counts";
const OTHER = "tenant-other";
const START = Date.parse("2026-11-23T08:40:00Z");
const SPAN_MS = 160 * 60_000; // 08:40 → 11:20: hours 08 (partial), 09, 10 (whole), 11 (partial)

/** A UTC timestamp with microseconds, `offsetUs` after START. */
function at(offsetUs: number): string {
  const ms = Math.floor(offsetUs / 1000);
  const iso = new Date(START + ms).toISOString();
  return `${iso.slice(0, 23)}${String(((offsetUs % 1000) + 1000) % 1000).padStart(3, "0")}Z`;
}

function record(id: string, tenant: string, time: string, n: number): TestRecord {
  return {
    id,
    time,
    source: "endpoint",
    action: n % 3 === 0 ? "/kms.Keys/Rotate" : "/svc.Endpoint/Search",
    resource: `index/products-${n % 7}`,
    result: n % 5 === 0 ? "PERMISSION_DENIED" : "OK",
    duration_ms: 1,
    claimed_tenant_id: tenant,
    principal_id: `p${n % 4}`,
    tenant_id: tenant,
  };
}

const object = (version: string) => ({
  bucket: "svc-audit",
  key: `test/${schema}`,
  versionId: version,
  bytes: 1,
  retainUntil: new Date(),
  writtenAt: new Date(),
});

/** The plain answer: `count(*)` over `events`, the definition every rollup must agree with. */
async function plainCount(tenant: string, query: AuditQuery): Promise<number> {
  const [row] = await sql.unsafe(
    `SELECT count(*)::int AS n FROM "${schema}".events WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = $1) AND time >= $2::timestamptz
       AND time < $3::timestamptz AND ($4::text IS NULL OR principal_id = $4) AND ($5::text IS NULL OR action = $5)
       AND ($6::text IS NULL OR result = $6) AND ($7::text IS NULL OR starts_with(resource, $7))`,
    [
      tenant,
      query.start,
      query.end,
      query.principalId ?? null,
      query.action ?? null,
      query.result ?? null,
      query.resourcePrefix ?? null,
    ],
  );
  return (row as { n: number }).n;
}

const FILTERS: Omit<AuditQuery, "start" | "end">[] = [
  {},
  { principalId: "p1" },
  { action: "/kms.Keys/Rotate" },
  { result: "PERMISSION_DENIED" },
  { principalId: "p2", action: "/svc.Endpoint/Search", result: "OK" },
  { resourcePrefix: "index/products-3" },
  { principalId: "nobody" },
];

beforeAll(async () => {
  await ensureIndexSchema(sql, schema);
  // 4 000 events of TENANT at random microseconds over 160 minutes, some on exact minute and hour boundaries, and
  // 500 of another tenant over the same span; written in batches, one batch twice (a retry) and a duplicate line.
  const next = seededRandom(8);
  const records: TestRecord[] = [];
  for (let i = 0; i < 4000; i++) {
    const offsetUs = i % 97 === 0 ? Math.floor(next() * 160) * 60_000_000 : Math.floor(next() * SPAN_MS * 1000);
    records.push(record(`ev-${i}`, TENANT, at(offsetUs), i));
  }
  for (let i = 0; i < 500; i++) records.push(record(`ot-${i}`, OTHER, at(Math.floor(next() * SPAN_MS * 1000)), i));
  records.push(record("ev-7", TENANT, records[7]?.time ?? "", 7)); // the same event shipped twice
  for (let first = 0; first < records.length; first += 1000) {
    const batch = sealBatch(topic, 0, BigInt(first), records.slice(first, first + 1000));
    await writeBatchIndex(sql, schema, batch, object(`v-${first}`));
    if (first === 2000) await writeBatchIndex(sql, schema, batch, object(`v-${first}-retry`));
  }
});

afterAll(async () => {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.close();
});

describe("wholeMinutes / wholeHours", () => {
  test("the whole hours inside the whole minutes, empty when there is none", () => {
    expect(wholeHours("2026-11-23T08:41:00Z", "2026-11-23T11:19:00Z")).toEqual({
      from: "2026-11-23T09:00:00Z",
      to: "2026-11-23T11:00:00Z",
    });
    expect(wholeHours("2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z")).toEqual({
      from: "2026-11-23T09:00:00Z",
      to: "2026-11-23T10:00:00Z",
    });
    expect(wholeHours("2026-11-23T23:01:00Z", "2026-11-24T00:59:00Z")).toEqual({
      from: "2026-11-24T00:00:00Z",
      to: "2026-11-24T00:00:00Z",
    });
    const minutes = wholeMinutes("2026-11-23T09:10:00.000001Z", "2026-11-23T09:59:59.999999Z");
    expect(minutes).toEqual({ from: "2026-11-23T09:11:00Z", to: "2026-11-23T09:59:00Z" });
    const hours = wholeHours(minutes.from, minutes.to);
    expect(hours.from >= hours.to).toBe(true);
  });
});

describe("nearestMinutes", () => {
  test("each end goes to its nearer minute boundary; a tie or an end on a boundary goes inward", () => {
    // [start, end, from, to, startOutward, endOutward]
    const cases: [string, string, string, string, boolean, boolean][] = [
      ["09:10:20Z", "09:50:40.5Z", "09:10:00Z", "09:51:00Z", true, true],
      ["09:10:40Z", "09:50:20Z", "09:11:00Z", "09:50:00Z", false, false],
      ["09:10:30Z", "09:50:30Z", "09:11:00Z", "09:50:00Z", false, false],
      // Inside one minute, both ends near its edges: the minute's rollup less what lies outside the range.
      ["09:10:05Z", "09:10:55Z", "09:10:00Z", "09:11:00Z", true, true],
    ];
    for (const [start, end, from, to, startOutward, endOutward] of cases) {
      const day = "2026-11-23T";
      expect(nearestMinutes(day + start, day + end)).toEqual({
        from: day + from,
        to: day + to,
        startOutward,
        endOutward,
      });
    }
    // Across midnight, the end rounded up to the next day.
    expect(nearestMinutes("2026-11-23T09:10:00Z", "2026-11-23T23:59:59.999999Z")).toMatchObject({
      from: "2026-11-23T09:10:00Z",
      to: "2026-11-24T00:00:00Z",
      startOutward: false,
      endOutward: true,
    });
    // Nothing whole to sum: from >= to.
    const short = nearestMinutes("2026-11-23T09:10:40Z", "2026-11-23T09:10:50Z");
    expect(short.from >= short.to).toBe(true);
  });
});

describe("inPageOrder", () => {
  const row = (us: number | null, t: string | null, id: string) => ({
    id,
    us,
    t,
    object_id: 1,
    byte_start: 0,
    byte_length: 1,
  });
  test("(time, id) order from the raw columns: float times before text ones, ids by their UTF-8 bytes", () => {
    expect(inPageOrder([])).toBe(true);
    expect(
      inPageOrder([
        row(1, null, "b"),
        row(2, null, "a"),
        row(2, null, "b"),
        row(null, "2106-01-01T00:00:00.000000Z", "a"),
      ]),
    ).toBe(true);
    expect(inPageOrder([row(2, null, "a"), row(1, null, "b")])).toBe(false);
    expect(inPageOrder([row(1, null, "b"), row(1, null, "a")])).toBe(false);
    expect(inPageOrder([row(null, "2106-01-01T00:00:00.000000Z", "a"), row(5, null, "a")])).toBe(false);
    expect(
      inPageOrder([row(null, "2107-01-01T00:00:00.000000Z", "a"), row(null, "2106-01-01T00:00:00.000000Z", "b")]),
    ).toBe(false);
    // U+FF21 sorts before U+1F600 in UTF-8 (and PostgreSQL's C order), after it in UTF-16 code units
    expect(inPageOrder([row(1, null, "\uff21"), row(1, null, "\u{1f600}")])).toBe(true);
    expect(inPageOrder([row(1, null, "\u{1f600}"), row(1, null, "\uff21")])).toBe(false);
  });
});

describe("IndexReader.count", () => {
  test("equals count(*) over events for ranges on and across hour and minute edges, with and without filters", async () => {
    const edges: [string, string][] = [
      ["2026-11-23T08:40:00Z", "2026-11-23T11:20:00Z"],
      ["2026-11-23T09:00:00Z", "2026-11-23T11:00:00Z"],
      ["2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z"],
      ["2026-11-23T08:59:59.999999Z", "2026-11-23T10:00:00.000001Z"],
      ["2026-11-23T09:00:00.000001Z", "2026-11-23T09:59:59.999999Z"],
      ["2026-11-23T08:59:00Z", "2026-11-23T10:01:00Z"],
      ["2026-11-23T08:45:30.5Z", "2026-11-23T11:12:01.25Z"],
      ["2026-11-23T09:30:00Z", "2026-11-23T10:30:00Z"],
      ["2026-11-23T09:59:00Z", "2026-11-23T10:00:00Z"],
      ["2026-11-23T10:00:00Z", "2026-11-23T10:00:00Z"],
      ["2026-11-23T10:17:12.345678Z", "2026-11-23T10:17:48Z"],
      ["2026-11-22T00:00:00Z", "2026-11-24T00:00:00Z"],
      // Ends that round outward (nearer the minute boundary outside the range): the rollup less what is outside.
      ["2026-11-23T08:40:10Z", "2026-11-23T11:19:50Z"],
      ["2026-11-23T09:00:00.000001Z", "2026-11-23T10:00:59.999999Z"],
      ["2026-11-23T10:17:05Z", "2026-11-23T10:17:55Z"],
      ["2026-11-23T09:59:29.999Z", "2026-11-23T10:00:30.001Z"],
    ];
    const next = seededRandom(20261123);
    for (let i = 0; i < 40; i++) {
      const a = Math.floor(next() * (SPAN_MS + 600_000) * 1000) - 300_000_000;
      const b = a + Math.floor(next() * SPAN_MS * 1000);
      edges.push([at(a), at(b)]);
    }
    let compared = 0;
    let nonZero = 0;
    for (const [start, end] of edges) {
      for (const filter of FILTERS) {
        for (const tenant of [TENANT, OTHER]) {
          const query = { start, end, ...filter };
          const expected = await plainCount(tenant, query);
          const got = await reader.count(tenant, query);
          if (got !== expected) throw new Error(`count ${tenant} ${JSON.stringify(query)}: ${got}, want ${expected}`);
          compared++;
          if (expected > 0) nonZero++;
        }
      }
    }
    expect(compared).toBe(edges.length * FILTERS.length * 2);
    expect(nonZero).toBeGreaterThan(compared / 3);
    // Every stored event counts once: the retried batch and the duplicate line added nothing.
    expect(await reader.count(TENANT, { start: "2026-11-23T00:00:00Z", end: "2026-11-24T00:00:00Z" })).toBe(4000);
  });

  test("whole hours are read from counts_hour, the minutes at the ends from counts", async () => {
    const whole = { start: "2026-11-23T08:59:30Z", end: "2026-11-23T10:00:30Z" };
    const inner = { start: "2026-11-23T09:10:00Z", end: "2026-11-23T09:50:00Z" };
    const before = [await reader.count(TENANT, whole), await reader.count(TENANT, inner)];
    // A marker row in the hour tier only: a range holding hour 09 sees it, a range inside that hour does not.
    await sql.unsafe(
      `INSERT INTO "${schema}".counts_hour (tenant_id, hour, principal_id, action, result, n)
         VALUES ($1, '2026-11-23T09:00:00Z', 'marker', 'marker', 'marker', 1000)`,
      [TENANT],
    );
    try {
      expect(await reader.count(TENANT, whole)).toBe((before[0] ?? 0) + 1000);
      expect(await reader.count(TENANT, inner)).toBe(before[1] ?? -1);
      expect(await reader.count(TENANT, { ...whole, principalId: "p1" })).toBe(
        await plainCount(TENANT, { ...whole, principalId: "p1" }),
      );
    } finally {
      await sql.unsafe(`DELETE FROM "${schema}".counts_hour WHERE principal_id = 'marker'`);
    }
  });
});

describe("IndexReader.count with kept rollup sums", () => {
  test("equals count(*) on every call, the first (summing) and the next (kept)", async () => {
    const kept = new IndexReader(sql, schema, new RollupSums());
    const next = seededRandom(4242);
    let compared = 0;
    for (let i = 0; i < 12; i++) {
      const a = Math.floor(next() * SPAN_MS * 1000);
      const query = { start: at(a), end: at(a + Math.floor(next() * (SPAN_MS * 1000 - a))) };
      for (const filter of FILTERS) {
        const expected = await plainCount(TENANT, { ...query, ...filter });
        for (let call = 0; call < 2; call++) {
          expect(await kept.count(TENANT, { ...query, ...filter })).toBe(expected);
          const { total } = await kept.countAndPage(TENANT, { ...query, ...filter }, undefined, 1);
          expect(total).toBe(expected);
          compared++;
        }
      }
      // Another tenant's range with the same minutes: its own sum, not TENANT's.
      expect(await kept.count(OTHER, query)).toBe(await plainCount(OTHER, query));
    }
    expect(compared).toBe(12 * FILTERS.length * 2);
  });

  test("a newly indexed batch counts at once: its transaction changes the fingerprint the kept sum was read under", async () => {
    const kept = new IndexReader(sql, schema, new RollupSums());
    const tenant = "tenant-kept";
    const query = { start: "2026-11-23T08:40:30Z", end: "2026-11-23T11:19:30Z" };
    const filtered = { ...query, principalId: "p-new" };
    // Inside whole hours and minutes of the range: only the rollups (the kept part) see these, not the edges.
    const inRange = (id: string, time: string, principal: string) => ({
      ...record(id, tenant, time, 1),
      principal_id: principal,
    });
    const first = ["08:50", "09:51", "10:52", "08:53", "11:04"].map((hm, n) =>
      inRange(`kept-${n}`, `2026-11-23T${hm}:00.5Z`, "p0"),
    );
    await writeBatchIndex(sql, schema, sealBatch(topic, 1, 0n, first), object("v-kept-1"));
    expect(await kept.count(tenant, query)).toBe(5);
    expect(await kept.count(tenant, query)).toBe(5); // from the kept sum
    expect(await kept.count(tenant, filtered)).toBe(0);
    const added = [0, 1, 2].map((n) => inRange(`new-${n}`, `2026-11-23T09:3${n}:00.5Z`, "p-new"));
    await writeBatchIndex(sql, schema, sealBatch(topic, 1, 5n, added), object("v-kept-2"));
    expect(await kept.count(tenant, query)).toBe(8);
    expect((await kept.countAndPage(tenant, filtered, undefined, 10)).total).toBe(3);
    expect(await kept.count(tenant, filtered)).toBe(3);
    expect(await plainCount(tenant, query)).toBe(8);
  });
});

describe("IndexReader.page", () => {
  /** The index's own rendering of each event's time (what `to_char` printed before rows carried epoch µs). */
  async function indexTimes(tenant: string): Promise<Map<string, string>> {
    const rows = (await sql.unsafe(
      `SELECT id, to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time FROM "${schema}".events
        WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = $1) ORDER BY time, id`,
      [tenant],
    )) as { id: string; time: string }[];
    return new Map(rows.map((row) => [row.id, row.time]));
  }

  async function pageThrough(tenant: string, query: AuditQuery, size: number) {
    const seen: { id: string; time: string }[] = [];
    let after: { time: string; id: string } | undefined;
    for (;;) {
      const rows = await reader.page(tenant, query, after, size);
      for (const row of rows) seen.push({ id: row.id, time: row.time });
      if (rows.length < size) return seen;
      after = rows.at(-1);
    }
  }

  test("keyset pages cover the tenant's events once, in order, with the index's microsecond times", async () => {
    const query = { start: "2026-11-23T00:00:00Z", end: "2026-11-24T00:00:00Z" };
    const expected = await indexTimes(TENANT);
    const seen = await pageThrough(TENANT, query, 333);
    expect(seen.map((row) => row.id)).toEqual([...expected.keys()]);
    for (const row of seen) expect(row.time).toBe(expected.get(row.id) as string);
    const both = await reader.countAndPage(TENANT, query, seen[9], 5);
    expect(both.total).toBe(4000);
    expect(both.rows.map((row) => row.id)).toEqual(seen.slice(10, 15).map((row) => row.id));
    const empty = await reader.countAndPage(
      TENANT,
      { start: "2026-11-22T00:00:00Z", end: "2026-11-22T01:00:00Z" },
      undefined,
      5,
    );
    expect(empty).toEqual({ total: 0, rows: [], indexed: new Set() });
  });

  test("a principal's pages (read through its postings) are the events filtered by principal, in order", async () => {
    const ranges = [
      { start: "2026-11-23T00:00:00Z", end: "2026-11-24T00:00:00Z" },
      { start: at(17_123_456), end: at(SPAN_MS * 1000 - 61_000_001) }, // ragged ends inside minutes
    ];
    let compared = 0;
    for (const range of ranges) {
      for (const filter of FILTERS.filter((f) => f.principalId !== undefined)) {
        const query = { ...range, ...filter };
        const rows = (await sql.unsafe(
          `SELECT id FROM "${schema}".events WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = $1) AND principal_id = $2 AND time >= $3::timestamptz
             AND time < $4::timestamptz AND ($5::text IS NULL OR action = $5) AND ($6::text IS NULL OR result = $6)
           ORDER BY time, id`,
          [TENANT, query.principalId, query.start, query.end, query.action ?? null, query.result ?? null],
        )) as { id: string }[];
        const seen = await pageThrough(TENANT, query, 37);
        expect(seen.map((row) => row.id)).toEqual(rows.map((row) => row.id));
        expect(await reader.count(TENANT, query)).toBe(rows.length);
        compared += rows.length;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  test("times far from now (before 1970, past 2038, from 2106 on, year 9999) keep their microseconds and order", async () => {
    const tenant = "tenant-far";
    const times = [
      "1900-01-01T00:00:00.000001Z",
      "1969-12-31T23:59:59.999999Z",
      "2038-01-19T03:14:08.999999Z",
      "2105-12-31T23:59:59.999999Z",
      "2106-01-01T00:00:00.000000Z",
      "2106-01-01T00:00:00.000001Z",
      "2300-06-15T12:00:00.123457Z",
      "9999-12-31T23:59:59.999999Z",
    ];
    await insertIndexRows(
      sql,
      schema,
      `SELECT 'far-' || n, $1, t::timestamptz, 'p', 'a', 'OK', 'r', (SELECT min(object_id) FROM "${schema}".objects), 0, 1
         FROM unnest($2::text::text[]) WITH ORDINALITY AS u(t, n)`,
      [tenant, `{${times.join(",")}}`],
    );
    const seen = await pageThrough(tenant, { start: "1800-01-01T00:00:00Z", end: "9999-12-31T23:59:59.9999999Z" }, 3);
    expect(seen.map((row) => row.time)).toEqual(times);
    const last = await reader.countAndPage(
      tenant,
      { start: "2100-01-01T00:00:00Z", end: "9999-12-31T23:59:59Z" },
      undefined,
      10,
    );
    expect(last.rows.map((row) => row.time)).toEqual(times.slice(3, 7));
  });
});
