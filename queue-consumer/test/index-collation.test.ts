/**
 * The index's text columns compare as bytes (`COLLATE "C"`, schema version 4) whatever the database's default
 * collation: the audit API merges index rows with the fresh tail in `(time, id)` order comparing ids as UTF-8
 * bytes, so an index ordered by a locale (ICU `en-US`: `a-1` before `B-1`) would list, skip or repeat records at
 * the seam. A database of the test's own with an ICU default collation stands for such a server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomName } from "@svc/testkit";
import { SQL } from "bun";
import { ensureIndexSchema, indexSchemaDdl, writeBatchIndex } from "../index.ts";
import { batchOf, dropSchema, indexFacts, stackAddresses, writtenObject } from "./helpers.ts";

const admin = new SQL({ url: stackAddresses().pgUrl, max: 1 });
const database = randomName("t_qc_icu").replaceAll("-", "_");
let icu: SQL;

/** Ids whose byte order (`B-1 Z _z a-1`) differs from a locale's (`_z a-1 B-1 Z` in ICU en-US). */
const IDS = ["a-1", "B-1", "_z", "Z"];
const BYTE_ORDER = ["B-1", "Z", "_z", "a-1"];
const TIME = "2026-11-27T04:00:00.000Z";
const TEXT_COLUMNS = {
  events: ["action", "id", "principal_id", "resource", "result"],
  tenants: ["tenant_id"],
  counts: ["action", "principal_id", "result", "tenant_id"],
  counts_hour: ["action", "principal_id", "result", "tenant_id"],
  principal_events: ["ids", "principal_id", "tenant_id"],
};

/**
 * The version 3 DDL: today's without the collation clauses, version 5's principal postings and writer check and
 * version 6's tenant keys, with `events` keyed on the tenant's text and the principal B-tree version 5 drops.
 */
const versionThreeDdl = (schema: string) => [
  ...indexSchemaDdl(schema)
    .filter((ddl) => !/principal_events|events_writer_version|\.("events"|"tenants") \(/.test(ddl))
    .map((ddl) => ddl.replaceAll(' COLLATE "C"', "")),
  `CREATE TABLE "${schema}".events (id text NOT NULL, tenant_id text NOT NULL, time timestamptz NOT NULL,
     principal_id text NOT NULL, action text NOT NULL, result text NOT NULL, resource text NOT NULL,
     object_id bigint NOT NULL, byte_start bigint NOT NULL, byte_length int NOT NULL,
     CONSTRAINT events_tenant_time_id PRIMARY KEY (tenant_id, time, id))`,
  `CREATE INDEX events_tenant_principal_time ON "${schema}".events (tenant_id, principal_id, time, id)`,
];

async function createVersionThree(sql: SQL, schema: string): Promise<void> {
  for (const ddl of versionThreeDdl(schema)) await sql.unsafe(ddl);
  await sql.unsafe(`INSERT INTO "${schema}".schema_migrations (version) VALUES (3)`);
}

/** The collation of each text column of the index's tables, by table. */
async function collations(sql: SQL, schema: string): Promise<Record<string, Record<string, string>>> {
  const rows = await sql`SELECT c.relname AS table, a.attname AS column, co.collname AS collation
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_collation co ON co.oid = a.attcollation
    WHERE n.nspname = ${schema} AND c.relname IN ('events', 'tenants', 'counts', 'counts_hour', 'principal_events')
      AND a.attnum > 0
    ORDER BY 1, 2`;
  const byTable: Record<string, Record<string, string>> = {};
  for (const row of rows as { table: string; column: string; collation: string }[]) {
    byTable[row.table] ??= {};
    (byTable[row.table] as Record<string, string>)[row.column] = row.collation;
  }
  return byTable;
}

const allC = Object.fromEntries(
  Object.entries(TEXT_COLUMNS).map(([table, columns]) => [table, Object.fromEntries(columns.map((c) => [c, "C"]))]),
);

/** The ids in the order of the index's key (one tenant: its time, then its id). */
async function idsInIndexOrder(sql: SQL, schema: string): Promise<string[]> {
  const rows = await sql.unsafe(`SELECT id FROM "${schema}".events ORDER BY time, id`);
  return rows.map((row: { id: string }) => row.id);
}

/** The ids after `after` at TIME, as the API's keyset pages ask. */
async function idsAfter(sql: SQL, schema: string, after: string): Promise<string[]> {
  const rows = await sql.unsafe(
    `SELECT id FROM "${schema}".events WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = 'tenant-a')
       AND (time, id) > ($1::timestamptz, $2) ORDER BY time, id`,
    [TIME, after],
  );
  return rows.map((row: { id: string }) => row.id);
}

beforeAll(async () => {
  await admin.unsafe(
    `CREATE DATABASE "${database}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
  );
  const url = new URL(stackAddresses().pgUrl);
  url.pathname = `/${database}`;
  icu = new SQL({ url: url.toString(), max: 2 });
  // What makes this database the case: its default order is the locale's, not the bytes'.
  const values = IDS.map((id) => `('${id}')`).join(", ");
  const [{ order }] = await icu.unsafe(`SELECT string_agg(x, ' ' ORDER BY x) AS order FROM (VALUES ${values}) AS v(x)`);
  expect(order).toBe("_z a-1 B-1 Z");
}, 60_000);

afterAll(async () => {
  await icu?.close();
  await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.close();
});

describe("the index's collation", () => {
  test("a new index on a database with a locale's default collation orders ids as bytes", async () => {
    const schema = "audit_new";
    await ensureIndexSchema(icu, schema);
    expect(await collations(icu, schema)).toEqual(allC);
    const batch = batchOf(
      IDS.map((id) => ({ id, time: TIME })),
      0n,
    );
    const indexed = await writeBatchIndex(icu, schema, batch, writtenObject("k/collation", "v1"));
    expect(indexed.inserted).toBe(4);
    expect(await idsInIndexOrder(icu, schema)).toEqual(BYTE_ORDER);
    expect(await idsAfter(icu, schema, "Z")).toEqual(["_z", "a-1"]);
  });

  test("a version 3 index there is migrated: its text columns take the C collation, rows kept", async () => {
    const schema = "audit_v3";
    await createVersionThree(icu, schema);
    for (const [i, id] of IDS.entries()) {
      await icu.unsafe(`INSERT INTO "${schema}".events VALUES ($1, 'tenant-a', $2, 'p', 'a', 'OK', 'r', 1, $3, 10)`, [
        id,
        TIME,
        i * 11,
      ]);
    }
    expect(await idsInIndexOrder(icu, schema)).toEqual(["_z", "a-1", "B-1", "Z"]);
    await ensureIndexSchema(icu, schema);
    const versions = await icu.unsafe(`SELECT version FROM "${schema}".schema_migrations ORDER BY 1`);
    expect(versions.map((row: { version: number }) => row.version)).toEqual([3, 6]);
    expect(await collations(icu, schema)).toEqual(allC);
    expect(await idsInIndexOrder(icu, schema)).toEqual(BYTE_ORDER);
    expect(await idsAfter(icu, schema, "Z")).toEqual(["_z", "a-1"]);
    expect(await indexFacts(icu, schema)).toMatchObject({ events: 4, posted: 4, strays: 0 });
  });

  test("a version 3 index on a C database reaches version 6 rebuilding only the indexes versions 5 and 6 replace", async () => {
    const [{ collate }] = await admin`SELECT datcollate AS collate FROM pg_database WHERE datname = current_database()`;
    expect(collate).toBe("C");
    const schema = randomName("t_qc_v3c").replaceAll("-", "_");
    await createVersionThree(admin, schema);
    const files = async (): Promise<string[]> =>
      (
        await admin`SELECT c.relname AS name, c.relfilenode AS file FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${schema} AND c.relkind = 'i' ORDER BY 1`
      ).map((row: { name: string; file: number }) => `${row.name}:${row.file}`);
    try {
      const before = await files();
      expect(before.length).toBeGreaterThan(4);
      await ensureIndexSchema(admin, schema);
      const versions = await admin.unsafe(`SELECT version FROM "${schema}".schema_migrations ORDER BY 1`);
      expect(versions.map((row: { version: number }) => row.version)).toEqual([3, 6]);
      // version 5 drops the principal B-tree and adds the postings' index, version 6 rebuilds the events key and
      // adds the tenants' two; every other index keeps its file (the collation's migration rebuilt none)
      const replaced = /^(events_tenant_principal_time|events_tenant_time_id|principal_events_key|tenants_[a-z_]+):/;
      const after = await files();
      expect(after.filter((file) => !replaced.test(file))).toEqual(before.filter((file) => !replaced.test(file)));
      expect(after.filter((file) => replaced.test(file)).map((file) => file.split(":")[0])).toEqual([
        "events_tenant_time_id",
        "principal_events_key",
        "tenants_pkey",
        "tenants_tenant_id_key",
      ]);
    } finally {
      await dropSchema(admin, schema);
    }
  });
});
