import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { SQL } from "bun";
import {
  claimIndexVersion,
  ensureIndexSchema,
  principalPostingsInsert,
  tenantKeys,
  WRITER_VERSION_REFUSED,
  writeBatchIndex,
} from "../index.ts";
import {
  backToVersion5Events,
  batchOf,
  dropSchema,
  indexFacts,
  recordVersion,
  stackAddresses,
  testNames,
  writtenObject,
} from "./helpers.ts";

const addresses = stackAddresses();
const sql = new SQL({ url: addresses.pgUrl, max: 4 });
const { schema } = testNames("tenant_keys");

beforeAll(async () => {
  await ensureIndexSchema(sql, schema);
});

afterAll(async () => {
  await dropSchema(sql, schema);
  await sql.close();
});

async function storedKeys(own: string): Promise<Map<string, number>> {
  const rows = (await sql.unsafe(`SELECT tenant_id, tenant_key FROM "${own}".tenants`)) as {
    tenant_id: string;
    tenant_key: number;
  }[];
  return new Map(rows.map((row) => [row.tenant_id, row.tenant_key]));
}

describe("tenantKeys", () => {
  test("new tenants are added once and keep their keys; ids with quotes, backslashes and commas stay as they are", async () => {
    const tenants = ["tenant-a", 'quo"te', "back\\slash", "com,ma {x}", "é世", "tenant-a"];
    const first = await tenantKeys(sql, schema, tenants);
    expect([...first.keys()].sort()).toEqual([...new Set(tenants)].sort());
    expect(new Set(first.values()).size).toBe(5);
    expect(await storedKeys(schema)).toEqual(first);
    const again = await tenantKeys(sql, schema, ["é世", "tenant-a", "tenant-b"]);
    expect(again.get("é世")).toBe(first.get("é世") as number);
    expect(again.get("tenant-a")).toBe(first.get("tenant-a") as number);
    expect((await storedKeys(schema)).size).toBe(6);
  });

  test("no tenants: an empty answer", async () => {
    expect((await tenantKeys(sql, schema, [])).size).toBe(0);
  });

  test("writers adding the same new tenants at once all get the one key each", async () => {
    const tenants = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, writer) =>
        // the statement sorts what it inserts, so a writer's own order changes nothing: both orders are sent to show it
        tenantKeys(sql, schema, writer % 2 === 0 ? tenants : [...tenants].reverse()),
      ),
    );
    const stored = await storedKeys(schema);
    for (const answer of answers) {
      expect(answer.size).toBe(tenants.length);
      for (const tenant of tenants) expect(answer.get(tenant)).toBe(stored.get(tenant) as number);
    }
  });

  test("the writer's events carry their tenant's key", async () => {
    await writeBatchIndex(
      sql,
      schema,
      batchOf([{ id: "k1", time: "2026-11-23T09:00:00Z" }], 0n),
      writtenObject(`k/${schema}`, "v1"),
    );
    const [row] = await sql.unsafe(
      `SELECT t.tenant_id FROM "${schema}".events e JOIN "${schema}".tenants t USING (tenant_key) WHERE e.id = 'k1'`,
    );
    expect(row).toEqual({ tenant_id: "tenant-a" });
  });
});

describe("the migration to version 6", () => {
  test("a version 5 index: events keyed by each tenant's key, rows and postings kept, the trigger on the new table", async () => {
    const { schema: old } = testNames("v5");
    await ensureIndexSchema(sql, old);
    await backToVersion5Events(sql, old);
    await recordVersion(sql, old, 5);
    const rows = [
      ["a1", "tenant-a", "2026-11-23T08:00:30Z", "p1", 0],
      ["a2", "tenant-a", "2026-11-23T08:01:00Z", "p2", 11],
      ["b1", "tenant-b", "2026-11-23T08:00:30Z", "p1", 22],
      ["b2", "tenant-b", "2026-11-23T08:00:30Z", "p1", 33],
    ] as const;
    await sql.begin(async (tx) => {
      await claimIndexVersion(tx);
      const values = rows
        .map(([id, tenant, time, principal, start]) => `('${id}', '${tenant}', '${time}', '${principal}', ${start})`)
        .join(", ");
      await tx.unsafe(`WITH added AS (
          INSERT INTO "${old}".events (id, tenant_id, time, principal_id, action, result, resource, object_id,
                                       byte_start, byte_length)
          SELECT id, tenant, time::timestamptz, principal, 'a', 'OK', 'r', 1, start, 10
          FROM (VALUES ${values}) AS v(id, tenant, time, principal, start)
          RETURNING tenant_id, principal_id, time, id
        ) ${principalPostingsInsert(old, "added")}`);
    });
    try {
      await ensureIndexSchema(sql, old);
      const versions = await sql.unsafe(`SELECT version FROM "${old}".schema_migrations ORDER BY 1`);
      expect(versions.map((r: { version: number }) => r.version)).toEqual([5, 6]);
      const keys = await storedKeys(old);
      expect([...keys.keys()].sort()).toEqual(["tenant-a", "tenant-b"]);
      const stored = await sql.unsafe(
        `SELECT e.id, t.tenant_id, e.byte_start::int AS start FROM "${old}".events e
           JOIN "${old}".tenants t USING (tenant_key) ORDER BY e.id`,
      );
      expect(stored).toEqual(rows.map(([id, tenant, , , start]) => ({ id, tenant_id: tenant, start })));
      const [key] = await sql`SELECT array_agg(a.attname ORDER BY k.n)::text[] AS columns FROM pg_index i
        CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = ${`"${old}".events`}::regclass AND i.indisprimary`;
      expect(key).toEqual({ columns: ["tenant_key", "time", "id"] });
      const [aside] = await sql.unsafe(`SELECT to_regclass('"${old}".events_v5') IS NULL AS gone`);
      expect(aside).toEqual({ gone: true });
      // both tables analyzed by the migration (their column statistics are there at once)
      const analyzed = await sql`SELECT tablename::text AS name FROM pg_stats
        WHERE schemaname = ${old} AND attname = 'tenant_key' ORDER BY 1`;
      expect(analyzed).toEqual([{ name: "events" }, { name: "tenants" }]);
      expect(await indexFacts(sql, old)).toMatchObject({ events: 4, posted: 4, strays: 0 });
      // the new table refuses an older writer's rows, as the old one did
      const refused = await rejectionOf(
        sql.unsafe(
          `INSERT INTO "${old}".events VALUES (1, 10, '2026-11-23T08:00:00Z', 1, 0, 'g1', 'p', 'a', 'OK', 'r')`,
        ),
        Error,
      );
      expect((refused as { errno?: unknown }).errno).toBe(WRITER_VERSION_REFUSED);
      await ensureIndexSchema(sql, old); // at version 6: nothing done twice
      expect((await storedKeys(old)).size).toBe(2);
      await writeBatchIndex(
        sql,
        old,
        batchOf([{ id: "n1", time: "2026-11-23T09:03:00Z" }], 1n),
        writtenObject(`k/${old}`, "v6-new"),
      );
      expect(await storedKeys(old)).toEqual(keys);
      expect(await indexFacts(sql, old)).toMatchObject({ events: 5, posted: 5, strays: 0 });
    } finally {
      await dropSchema(sql, old);
    }
  });
});
