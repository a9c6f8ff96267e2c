import type { SQL } from "bun";
import { QueueConsumerError } from "./errors.ts";

/** The index's tables (docs/audit-storage.md, "Index"); the audit API reads them under the same schema. */
export const INDEX_TABLES = {
  objects: "objects",
  tenants: "tenants",
  events: "events",
  principalEvents: "principal_events",
  counts: "counts",
  countsHour: "counts_hour",
  marks: "marks",
  migrations: "schema_migrations",
} as const;

/** The schema version this package writes; the audit API can refuse an index older than the one it reads. */
export const INDEX_SCHEMA_VERSION = 6;

/**
 * The transaction setting a writer of version 5 or later sets before it inserts events (`set_config(…, true)`): the
 * schema's statement trigger refuses inserts into `events` without it, so a version 4 writer still running after
 * the migration cannot add events without their principal postings (docs/audit-storage.md, "Principal postings").
 */
export const INDEX_VERSION_SETTING = "svc_audit.index_version";

/** SQLSTATE of the trigger's refusal: `check_violation`, a class a version 4 writer does not retry. */
export const WRITER_VERSION_REFUSED = "23514";

/**
 * Origin of the index's minute and hour bins (rollups, principal postings): `date_bin` to a UTC midnight before any
 * time `timestamptz` accepts from a record (year 1) is `date_trunc(…, 'UTC')` — timestamps have no leap seconds —
 * without a time zone lookup per row.
 */
export const BIN_ORIGIN = "0001-01-01T00:00:00Z";

/**
 * Declares the transaction `tx` a writer of this schema version (`INDEX_VERSION_SETTING`), for event rows inserted
 * other than by `writeBatchIndex` (a test's or a bench's own rows, with their postings): the schema refuses them
 * otherwise.
 */
export async function claimIndexVersion(tx: SQL): Promise<void> {
  await tx`SELECT set_config(${INDEX_VERSION_SETTING}, ${String(INDEX_SCHEMA_VERSION)}, true)`;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** `"schema"."table"`, for a schema name checked against the identifier pattern. */
export function qualifiedTable(schema: string, table: keyof typeof INDEX_TABLES): string {
  if (!IDENTIFIER.test(schema)) {
    throw new QueueConsumerError("QUEUE_CONSUMER_SCHEMA_FAILED", `bad schema name ${JSON.stringify(schema)}`, {
      subject: schema,
    });
  }
  return `"${schema}"."${INDEX_TABLES[table]}"`;
}

/**
 * `CREATE TABLE IF NOT EXISTS` of version 6's `events` as `table` (a qualified name): the fixed-width columns first,
 * the int4 pair before the 8-byte ones (no padding, and their offsets cached when a row is read).
 */
function eventsTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
       tenant_key int NOT NULL, byte_length int NOT NULL, time timestamptz NOT NULL, object_id bigint NOT NULL,
       byte_start bigint NOT NULL, id text COLLATE "C" NOT NULL, principal_id text COLLATE "C" NOT NULL,
       action text COLLATE "C" NOT NULL, result text COLLATE "C" NOT NULL, resource text COLLATE "C" NOT NULL,
       CONSTRAINT events_tenant_time_id PRIMARY KEY (tenant_key, time, id))`;
}

/** The statement trigger refusing event inserts of a writer older than version 5 (`events_writer_version`). */
function eventsTriggerDdl(schema: string): string {
  return `CREATE OR REPLACE TRIGGER events_writer_version BEFORE INSERT ON ${qualifiedTable(schema, "events")}
       FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".events_writer_version()`;
}

/**
 * The DDL of the current version, for a checked schema name. Version 2 keys `events` on `(tenant_id, time, id)`,
 * the order every page and export reads: one B-tree fewer per event row than version 1's `id` key plus its
 * `(tenant_id, time, id)` index. Version 3 adds `counts_hour`, the hourly tier of the `counts` rollup, so a count
 * over days sums hours instead of minutes (docs/audit-storage.md, "Index"). Version 4 declares the text columns
 * of `events` and the rollups `COLLATE "C"`: the index orders ids as bytes (as the audit API merges them with the
 * fresh tail) whatever the database's default collation, and compares keys without a locale. Version 5 replaces
 * the principal B-tree on `events` by `principal_events` postings the writer copies per batch, and refuses event
 * inserts of a writer that does not add them (docs/audit-storage.md, "Principal postings"). Version 6 keys `events`
 * on `(tenant_key, time, id)`, the tenant's integer key from `tenants`, instead of its text id: a text first column
 * made each key comparison decode it and left the later columns' offsets uncached (docs/audit-storage.md, "Tenant
 * keys").
 */
export function indexSchemaDdl(schema: string): string[] {
  const t = (table: keyof typeof INDEX_TABLES) => qualifiedTable(schema, table);
  return [
    `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
    `CREATE TABLE IF NOT EXISTS ${t("migrations")} (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE IF NOT EXISTS ${t("objects")} (
       object_id bigserial PRIMARY KEY, bucket text NOT NULL, key text NOT NULL, version_id text NOT NULL,
       topic text NOT NULL, partition int NOT NULL, first_offset bigint NOT NULL, last_offset bigint NOT NULL,
       records int NOT NULL, bytes bigint NOT NULL, min_time timestamptz, max_time timestamptz,
       written_at timestamptz NOT NULL DEFAULT now(), UNIQUE (bucket, key, version_id))`,
    `CREATE TABLE IF NOT EXISTS ${t("tenants")} (
       tenant_key int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, tenant_id text COLLATE "C" NOT NULL UNIQUE)`,
    eventsTableDdl(t("events")),
    `CREATE TABLE IF NOT EXISTS ${t("principalEvents")} (
       tenant_id text COLLATE "C" NOT NULL, principal_id text COLLATE "C" NOT NULL, minute timestamptz NOT NULL,
       times timestamptz[] NOT NULL, ids text[] COLLATE "C" NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS principal_events_key ON ${t("principalEvents")} (tenant_id, principal_id, minute)`,
    // Postings rows past ~2 kB are compressed: lz4 where the server has it (pglz was 8 % of the backend's CPU per
    // event, lz4 0.7 %); altered only while a column is not lz4 yet (docs/audit-storage.md, "Principal postings").
    `DO $d$ BEGIN
       IF 'lz4' = ANY ((SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression')::text[])
          AND EXISTS (SELECT 1 FROM pg_attribute
                      WHERE attrelid = '${t("principalEvents")}'::regclass
                        AND attname IN ('ids', 'times') AND attcompression IS DISTINCT FROM 'l') THEN
         ALTER TABLE ${t("principalEvents")} ALTER COLUMN ids SET COMPRESSION lz4, ALTER COLUMN times SET COMPRESSION lz4;
       END IF;
     END $d$`,
    `CREATE OR REPLACE FUNCTION "${schema}".events_writer_version() RETURNS trigger LANGUAGE plpgsql AS $f$
     BEGIN
       IF coalesce(substring(current_setting('${INDEX_VERSION_SETTING}', true) FROM '^[0-9]{1,9}$')::int, 0) < 5 THEN
         RAISE EXCEPTION 'events of index schema ${schema} are inserted by a writer of schema version 5 or later'
           USING ERRCODE = '${WRITER_VERSION_REFUSED}',
                 HINT = 'it sets ${INDEX_VERSION_SETTING} and adds the principal postings (docs/audit-storage.md)';
       END IF;
       RETURN NULL;
     END $f$`,
    eventsTriggerDdl(schema),
    `CREATE TABLE IF NOT EXISTS ${t("counts")} (
       tenant_id text COLLATE "C" NOT NULL, minute timestamptz NOT NULL, principal_id text COLLATE "C" NOT NULL,
       action text COLLATE "C" NOT NULL, result text COLLATE "C" NOT NULL, n bigint NOT NULL, PRIMARY KEY (tenant_id, minute, principal_id, action, result))`,
    `CREATE TABLE IF NOT EXISTS ${t("countsHour")} (
       tenant_id text COLLATE "C" NOT NULL, hour timestamptz NOT NULL, principal_id text COLLATE "C" NOT NULL,
       action text COLLATE "C" NOT NULL, result text COLLATE "C" NOT NULL, n bigint NOT NULL, PRIMARY KEY (tenant_id, hour, principal_id, action, result))`,
    `CREATE TABLE IF NOT EXISTS ${t("marks")} (
       topic text NOT NULL, partition int NOT NULL, indexed_through bigint NOT NULL, PRIMARY KEY (topic, partition))`,
  ];
}

/** Version 1 → 2 on an existing schema: the `events` key becomes `(tenant_id, time, id)`, its twin index goes. */
function migrateV1ToV2(schema: string): string[] {
  const events = qualifiedTable(schema, "events");
  return [
    `ALTER TABLE ${events} DROP CONSTRAINT IF EXISTS events_pkey`,
    `ALTER TABLE ${events} ADD CONSTRAINT events_tenant_time_id PRIMARY KEY (tenant_id, time, id)`,
    `DROP INDEX IF EXISTS "${schema}".events_tenant_time`,
  ];
}

/**
 * Version 2 → 3 on an existing schema, after the DDL created the empty `counts_hour`: fill it from `counts` (each
 * minute row summed into its UTC hour). `counts` is locked against writes first, so a writer of an older version
 * still running cannot add a minute that the copy misses; once at version 3 every writer fills both tables.
 */
function migrateV2ToV3(schema: string): string[] {
  const counts = qualifiedTable(schema, "counts");
  return [
    `LOCK TABLE ${counts} IN EXCLUSIVE MODE`,
    `INSERT INTO ${qualifiedTable(schema, "countsHour")} (tenant_id, hour, principal_id, action, result, n)
       SELECT tenant_id, date_trunc('hour', minute, 'UTC'), principal_id, action, result, sum(n)
       FROM ${counts} GROUP BY 1, 2, 3, 4, 5`,
  ];
}

/** The text columns version 4 declares `COLLATE "C"`, by table. */
const C_COLUMNS = {
  events: ["id", "tenant_id", "principal_id", "action", "result", "resource"],
  counts: ["tenant_id", "principal_id", "action", "result"],
  countsHour: ["tenant_id", "principal_id", "action", "result"],
} as const;

/**
 * Version 3 → 4 on an existing schema: its text columns take the C collation. On a database whose default collation
 * already compares like C (`C` or `POSIX`, libc) nothing changes; elsewhere the columns are altered, which rebuilds
 * the tables' indexes under an exclusive lock (writers wait on the advisory lock, the API's reads on the tables).
 */
function migrateV3ToV4(schema: string): string[] {
  return Object.entries(C_COLUMNS).map(
    ([table, columns]) =>
      `ALTER TABLE ${qualifiedTable(schema, table as keyof typeof C_COLUMNS)} ${columns
        .map((column) => `ALTER COLUMN ${column} TYPE text COLLATE "C"`)
        .join(", ")}`,
  );
}

/**
 * Version 4 → 5 on an existing schema, after the DDL created the empty `principal_events` and the writer-version
 * trigger: `events` is locked against writes, its rows grouped into postings (per tenant, principal and UTC minute,
 * as the writer groups a batch's), and the principal B-tree they replace is dropped.
 */
function migrateV4ToV5(schema: string): string[] {
  const events = qualifiedTable(schema, "events");
  return [
    `LOCK TABLE ${events} IN EXCLUSIVE MODE`,
    principalPostingsInsert(schema, events),
    `DROP INDEX IF EXISTS "${schema}".events_tenant_principal_time`,
  ];
}

/**
 * Version 5 → 6 on an existing schema, after the DDL created the empty `tenants`: every tenant of `events` gets its
 * key, and `events` is rebuilt keyed on `(tenant_key, time, id)` — renamed aside, created anew, filled in key order,
 * the old table (with its trigger) dropped and the trigger added to the new one. The renaming locks `events`
 * against reads as well until the commit: the audit API's pages wait, writers wait on the advisory lock.
 */
function migrateV5ToV6(schema: string): string[] {
  const events = qualifiedTable(schema, "events");
  const aside = `"${schema}".events_v5`;
  return [
    `LOCK TABLE ${events} IN ACCESS EXCLUSIVE MODE`,
    `INSERT INTO ${qualifiedTable(schema, "tenants")} (tenant_id)
       SELECT DISTINCT tenant_id FROM ${events} ORDER BY 1 ON CONFLICT (tenant_id) DO NOTHING`,
    `ALTER TABLE ${events} RENAME TO events_v5`,
    `ALTER TABLE ${aside} RENAME CONSTRAINT events_tenant_time_id TO events_v5_key`,
    eventsTableDdl(events),
    `INSERT INTO ${events} (tenant_key, byte_length, time, object_id, byte_start, id, principal_id, action, result,
                            resource)
       SELECT t.tenant_key, e.byte_length, e.time, e.object_id, e.byte_start, e.id, e.principal_id, e.action,
              e.result, e.resource
       FROM ${aside} e JOIN ${qualifiedTable(schema, "tenants")} t USING (tenant_id)
       ORDER BY t.tenant_key, e.time, e.id`,
    `DROP TABLE ${aside}`,
    eventsTriggerDdl(schema),
    // the new table's statistics now, not when autovacuum first gets to it: the audit API's plans need them
    `ANALYZE ${events}, ${qualifiedTable(schema, "tenants")}`,
  ];
}

/**
 * SQL adding the principal postings of the event rows in `rows` (a table, or a `WITH` name holding `tenant_id`,
 * `principal_id`, `time` and `id`): one `principal_events` row per tenant, principal and UTC minute. For rows indexed
 * other than by the writer's copy (the migration, the duplicates path, a test's or a bench's own rows); each event
 * must be added once.
 */
export function principalPostingsInsert(schema: string, rows: string): string {
  return `INSERT INTO ${qualifiedTable(schema, "principalEvents")} (tenant_id, principal_id, minute, times, ids)
    SELECT tenant_id, principal_id, date_bin('1 minute', time, '${BIN_ORIGIN}'), array_agg(time ORDER BY time, id),
           array_agg(id ORDER BY time, id)
    FROM ${rows} GROUP BY 1, 2, 3`;
}

/**
 * Whether the database's default collation orders text as the C collation does (libc `C` or `POSIX`; the provider
 * column, PostgreSQL 15 on, read through `to_jsonb` so that older servers, libc only, answer too).
 */
async function defaultCollationIsC(tx: SQL): Promise<boolean> {
  const [row] =
    await tx`SELECT d.datcollate IN ('C', 'POSIX') AND coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c' AS c
    FROM pg_database d WHERE d.datname = current_database()`;
  return (row as { c: boolean }).c;
}

/**
 * Creates the index schema when missing (`CREATE … IF NOT EXISTS`, one migration table), under a transaction-scoped
 * advisory lock so replicas starting together do not race. Throws `QUEUE_CONSUMER_SCHEMA_FAILED`.
 */
export async function ensureIndexSchema(sql: SQL, schema: string): Promise<void> {
  const migrations = qualifiedTable(schema, "migrations");
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${`svc-audit-index:${schema}`}))`;
      const [found] = await tx.unsafe(`SELECT to_regclass('${migrations}') IS NOT NULL AS present`);
      const { present } = found as { present: boolean };
      let version = 0;
      if (present) {
        const [row] = await tx.unsafe(`SELECT coalesce(max(version), 0)::int AS version FROM ${migrations}`);
        version = (row as { version: number }).version;
      }
      if (version > INDEX_SCHEMA_VERSION) {
        throw new QueueConsumerError(
          "QUEUE_CONSUMER_SCHEMA_FAILED",
          `index schema ${schema} is at version ${version}, newer than this program's ${INDEX_SCHEMA_VERSION}`,
          { subject: schema, canRetry: false },
        );
      }
      for (const statement of indexSchemaDdl(schema)) await tx.unsafe(statement);
      if (version === 1) for (const statement of migrateV1ToV2(schema)) await tx.unsafe(statement);
      if (version === 1 || version === 2) for (const statement of migrateV2ToV3(schema)) await tx.unsafe(statement);
      if (version >= 1 && version <= 3 && !(await defaultCollationIsC(tx))) {
        for (const statement of migrateV3ToV4(schema)) await tx.unsafe(statement);
      }
      if (version >= 1 && version <= 4) for (const statement of migrateV4ToV5(schema)) await tx.unsafe(statement);
      if (version >= 1 && version <= 5) for (const statement of migrateV5ToV6(schema)) await tx.unsafe(statement);
      await tx.unsafe(
        `INSERT INTO ${migrations} (version) VALUES (${INDEX_SCHEMA_VERSION}) ON CONFLICT (version) DO NOTHING`,
      );
    });
  } catch (error) {
    if (error instanceof QueueConsumerError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new QueueConsumerError("QUEUE_CONSUMER_SCHEMA_FAILED", `index schema ${schema}: ${message}`, {
      subject: schema,
      canRetry: true,
      cause: error,
    });
  }
}
