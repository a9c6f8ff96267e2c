import type { SQL, TransactionSQL } from "bun";
import { QueueConsumerError } from "./errors.ts";
import type { IndexChunk } from "./index-chunk.ts";
import { BIN_ORIGIN, INDEX_SCHEMA_VERSION, INDEX_VERSION_SETTING, principalPostingsInsert } from "./index-schema.ts";
import { batchEvents, type IndexedEvent, type SealedBatch } from "./partition-batch.ts";
import { integerArrayLiteral, textArrayLiteral } from "./pg-array-literal.ts";
import type { WrittenObject } from "./put-batch-object.ts";
import { compareRollupKeys, hourRollups, RollupCounter, type RollupRow, rollupColumns } from "./rollup-counts.ts";
import { tenantKeyOf, tenantKeys } from "./tenant-keys.ts";

/** Events per INSERT statement: one huge statement grows slower than linearly (its CTEs spill to disk). */
const EVENTS_PER_STATEMENT = 10_000;

const UNIQUE_VIOLATION = "23505";

/** A table of the index's schema, as an identifier for a query (`sql("schema.table")`: any connection's). */
type TableIn = (name: string) => SQL.Query<unknown>;

type TextColumn = "id" | "time" | "principal_id" | "action" | "result" | "resource";
type IntegerColumn = "byte_start" | "byte_length";

/**
 * A chunk's events as one array literal per column, the tenant as its key (the duplicates path's `unnest`;
 * PostgreSQL parses the times).
 */
function eventColumns(
  chunk: readonly IndexedEvent[],
  keys: ReadonlyMap<string, number>,
  backslashes: boolean,
): Record<TextColumn | IntegerColumn | "tenant_key", string> {
  const text = (key: TextColumn) =>
    textArrayLiteral(
      chunk.map((event) => event[key]),
      backslashes,
    );
  const integer = (key: IntegerColumn) => integerArrayLiteral(chunk.map((event) => event[key]));
  return {
    id: text("id"),
    tenant_key: integerArrayLiteral(chunk.map((event) => tenantKeyOf(keys, event.tenant_id))),
    time: text("time"),
    principal_id: text("principal_id"),
    action: text("action"),
    result: text("result"),
    resource: text("resource"),
    byte_start: integer("byte_start"),
    byte_length: integer("byte_length"),
  };
}

/**
 * The SQLSTATE of a PostgreSQL error (Bun's `errno`), else the error's own code (Bun's `ERR_POSTGRES_*` for a
 * failure of its own, a socket's `ECONNRESET`, ...), if any.
 */
function sqlState(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { errno, code } = error as { errno?: unknown; code?: unknown };
  if (typeof errno === "string") return errno;
  return typeof code === "string" ? code : undefined;
}

export interface IndexedBatch {
  objectId: bigint;
  /** Event rows really inserted (the others were indexed before: a duplicate shipped or written twice). */
  inserted: number;
}

function sqlMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * SQLSTATEs that heal by themselves: classes 08 (connection exception), 40 (transaction rollback: serialization
 * failure, deadlock), 53 (insufficient resources: disk full, out of memory, too many connections), 57 (operator
 * intervention: admin or crash shutdown, cannot connect now, a cancelled statement), 58 (system error: I/O), and
 * 55P03 (lock not available) and 25006 (read-only transaction: a primary that failed over is a standby until it is
 * pointed at the new one), 25P03 / 25P04 (an idle-in-transaction or transaction timeout: the transaction is begun again).
 */
const TRANSIENT_SQLSTATE = /^(08|40|53|57|58)[0-9A-Z]{3}$|^55P03$|^25006$|^25P0[34]$/;

/**
 * Bun's own codes (no SQLSTATE) for a connection that could not be made, was lost or timed out, and a cancelled
 * query; the other `ERR_POSTGRES_*` (authentication, TLS, protocol, a transaction misused) do not heal by waiting.
 */
const TRANSIENT_BUN_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_QUERY_CANCELLED",
]);

/** A socket's own failure (Node's codes), should one reach the writer without Bun's wrapping. */
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  // the server's name not resolving: a StatefulSet pod's DNS record is gone while the pod restarts
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether the index write may succeed later: an allow-list of transient causes (`TRANSIENT_SQLSTATE`, a lost or
 * refused connection), or what one of this module's own errors (`QueueConsumerError`) says. Anything else does not
 * heal by retrying the same batch, and stops the writer with `QUEUE_CONSUMER_INDEX_FAILED` instead of holding the
 * partition forever: a data or constraint error (22, 23), an undefined column (42), 54000 (an index row past the
 * B-tree's 2704 bytes: a field far longer than the record schema allows, from a producer that is not the agent), an
 * internal error (XX000), or a JavaScript error (a bug, e.g. `ERR_OUT_OF_RANGE`).
 */
export function canRetryIndex(error: unknown): boolean {
  if (error instanceof QueueConsumerError) return error.canRetry;
  const state = sqlState(error);
  if (state === undefined) return false;
  return TRANSIENT_SQLSTATE.test(state) || TRANSIENT_BUN_CODES.has(state) || NETWORK_CODES.has(state);
}

/** Sends `payload` (binary `COPY` rows) to a `COPY … FROM STDIN`; resolves once stored, rejects with the server's error. */
async function copyIn(copy: SQL.Query<unknown>, payload: Buffer): Promise<void> {
  const writer = copy.writable().getWriter();
  await writer.write(payload);
  await writer.close();
}

/**
 * Copies a chunk's events in (binary `COPY`) with their principal postings, both encoded as the batch was read
 * (`IndexChunk`), inside a savepoint; the chunk's minute rollups are the caller's to add.
 * False, with nothing stored, when an event was indexed before (23505) or a time must go in as text (not `plain`).
 */
async function copyEvents(
  tx: TransactionSQL,
  table: TableIn,
  chunk: IndexChunk,
  objectId: bigint,
  keys: ReadonlyMap<string, number>,
): Promise<boolean> {
  if (!chunk.plain) return false;
  return await tx
    .savepoint(async (sp) => {
      await copyIn(
        sp`COPY ${table("events")} (object_id, tenant_key, id, time, principal_id, action, result, resource,
                                    byte_start, byte_length)
           FROM STDIN (FORMAT binary)`,
        chunk.eventRows(objectId, keys),
      );
      await copyIn(
        sp`COPY ${table("principal_events")} (tenant_id, principal_id, minute, times, ids) FROM STDIN (FORMAT binary)`,
        chunk.postingRows(),
      );
      return true;
    })
    .catch((error: unknown) => {
      if (sqlState(error) === UNIQUE_VIOLATION) return false;
      throw error;
    });
}

/**
 * Adds a batch's minute rollups to `counts` and, summed per UTC hour, to `counts_hour`, each table's rows in key
 * order: a row stays locked to the commit, and writers that take shared rows in one order wait for each other
 * instead of deadlocking (docs/audit-storage.md, "Write, per batch", step 4).
 */
async function addRollups(
  tx: TransactionSQL,
  table: TableIn,
  minuteRows: readonly RollupRow[],
  backslashes: boolean,
): Promise<void> {
  if (minuteRows.length === 0) return;
  const minutes = rollupColumns([...minuteRows].sort(compareRollupKeys), backslashes);
  const hours = rollupColumns(hourRollups(minuteRows).sort(compareRollupKeys), backslashes);
  await tx`
    WITH rolled AS (
      INSERT INTO ${table("counts")} AS c (tenant_id, minute, principal_id, action, result, n)
      SELECT t, to_timestamp(s), p, a, r, n
      FROM unnest(${minutes.tenant_id}::text[], ${minutes.bin}::float8[], ${minutes.principal_id}::text[],
                  ${minutes.action}::text[], ${minutes.result}::text[], ${minutes.n}::bigint[]) AS u(t, s, p, a, r, n)
      ON CONFLICT (tenant_id, minute, principal_id, action, result) DO UPDATE SET n = c.n + excluded.n
    )
    INSERT INTO ${table("counts_hour")} AS h (tenant_id, hour, principal_id, action, result, n)
    SELECT t, to_timestamp(s), p, a, r, n
    FROM unnest(${hours.tenant_id}::text[], ${hours.bin}::float8[], ${hours.principal_id}::text[],
                ${hours.action}::text[], ${hours.result}::text[], ${hours.n}::bigint[]) AS u(t, s, p, a, r, n)
    ON CONFLICT (tenant_id, hour, principal_id, action, result) DO UPDATE SET n = h.n + excluded.n`;
}

/**
 * Inserts the chunk's events not indexed before (`ON CONFLICT (tenant_key, time, id) DO NOTHING`, times as text)
 * with the principal postings of exactly those, in one statement, and adds exactly those to `minutes`, binned by
 * PostgreSQL. Returns how many were inserted.
 */
async function insertNewEvents(
  tx: TransactionSQL,
  schema: string,
  table: TableIn,
  chunk: readonly IndexedEvent[],
  objectId: bigint,
  keys: ReadonlyMap<string, number>,
  backslashes: boolean,
  minutes: RollupCounter,
): Promise<number> {
  const input = eventColumns(chunk, keys, backslashes);
  const groups = (await tx`
    WITH input AS (
      SELECT * FROM unnest(${input.id}::text[], ${input.tenant_key}::int[], ${input.time}::text[],
                           ${input.principal_id}::text[], ${input.action}::text[], ${input.result}::text[],
                           ${input.resource}::text[], ${input.byte_start}::bigint[], ${input.byte_length}::int[])
        AS u(id, tenant_key, time, principal_id, action, result, resource, byte_start, byte_length)
    ), inserted AS (
      INSERT INTO ${table("events")} (id, tenant_key, time, principal_id, action, result, resource, object_id,
                                      byte_start, byte_length)
      SELECT id, tenant_key, time::timestamptz, principal_id, action, result, resource,
             ${objectId.toString()}::bigint, byte_start, byte_length
      FROM input
      ON CONFLICT (tenant_key, time, id) DO NOTHING
      RETURNING id, tenant_key, time, principal_id, action, result
    ), named AS (
      SELECT i.id, t.tenant_id, i.time, i.principal_id, i.action, i.result
      FROM inserted i JOIN ${table("tenants")} t USING (tenant_key)
    ), postings AS (
      ${tx.unsafe(principalPostingsInsert(schema, "named"))}
    )
    -- postings runs to completion unread (PostgreSQL runs every data-modifying WITH once)
    SELECT tenant_id, principal_id, action, result,
           (extract(epoch FROM date_bin('1 minute', time, ${BIN_ORIGIN}::timestamptz))::bigint * 1000)::float8 AS bin,
           count(*)::int AS n
    FROM named
    GROUP BY tenant_id, principal_id, action, result, bin`) as RollupRow[]; // bins as PostgreSQL binned the times
  let inserted = 0;
  for (const group of groups) {
    minutes.addRow(group);
    inserted += group.n;
  }
  return inserted;
}

/**
 * Indexes one written batch in one transaction (docs/audit-storage.md, "Write, per batch, after the PUT"):
 * the `objects` row (`written_at` = the PUT's acknowledgement, and the transaction's `svc_audit.index_version`,
 * without which the schema refuses event rows); the event rows in bulk, by a binary `COPY` with their principal
 * postings, or — on a duplicate, or a time PostgreSQL would bin otherwise — by an INSERT from `unnest` of column
 * arrays with `ON CONFLICT (tenant_key, time, id) DO NOTHING`, so an event indexed before keeps its first (object,
 * byte range); the `counts` (minute) and `counts_hour` rollups of exactly the rows inserted, summed over the batch
 * and added in key order; and `marks.indexed_through` (never lowered: a former owner of the partition may finish a batch after
 * the new one).
 * Run again for the same object version, it inserts nothing new. Throws `QUEUE_CONSUMER_INDEX_FAILED`.
 */
export async function writeBatchIndex(
  sql: SQL,
  schema: string,
  batch: SealedBatch,
  object: WrittenObject,
): Promise<IndexedBatch> {
  const table: TableIn = (name) => sql(`${schema}.${name}`);
  try {
    // the batch's tenants keyed before its transaction, on their own connection (`tenantKeys`)
    const keys = await tenantKeys(
      sql,
      schema,
      batch.chunks.flatMap((chunk) => chunk.tenants),
    );
    return await sql.begin(async (tx) => {
      const [row] = await tx`
        INSERT INTO ${table("objects")} (bucket, key, version_id, topic, partition, first_offset, last_offset,
                                        records, bytes, min_time, max_time, written_at)
        VALUES (${object.bucket}, ${object.key}, ${object.versionId}, ${batch.topic}, ${batch.partition},
                ${batch.firstOffset.toString()}::bigint, ${batch.lastOffset.toString()}::bigint, ${batch.records},
                ${object.bytes}, ${batch.minTime ?? null}::timestamptz, ${batch.maxTime ?? null}::timestamptz,
                ${object.writtenAt.toISOString()}::timestamptz)
        ON CONFLICT (bucket, key, version_id) DO UPDATE SET records = excluded.records
        RETURNING object_id::text AS object_id,
                  set_config(${INDEX_VERSION_SETTING}, ${String(INDEX_SCHEMA_VERSION)}, true) AS index_version`;
      const objectId = BigInt((row as { object_id: string }).object_id);
      let inserted = 0;
      const minutes = new RollupCounter();
      for (const chunk of batch.chunks) {
        // Usually none of the events was indexed before: a plain COPY (no conflict check per row) and rollups
        // grouped here. A duplicate (a batch written again, a record shipped twice) fails it with 23505; the
        // savepoint undoes it, and the statements that skip indexed events and count only the rest run instead,
        // on the chunk's lines read again.
        if (await copyEvents(tx, table, chunk, objectId, keys)) {
          inserted += chunk.events;
          for (const row of chunk.minuteRollups()) minutes.addRow(row);
          continue;
        }
        const events = batchEvents(batch, chunk.firstLine, chunk.endLine);
        for (let at = 0; at < events.length; at += EVENTS_PER_STATEMENT) {
          const part = events.slice(at, at + EVENTS_PER_STATEMENT);
          inserted += await insertNewEvents(tx, schema, table, part, objectId, keys, batch.backslashes, minutes);
        }
      }
      await addRollups(tx, table, minutes.rows, batch.backslashes);
      await tx`
        INSERT INTO ${table("marks")} AS m (topic, partition, indexed_through)
        VALUES (${batch.topic}, ${batch.partition}, ${batch.lastOffset.toString()}::bigint)
        ON CONFLICT (topic, partition) DO UPDATE
          SET indexed_through = GREATEST(m.indexed_through, excluded.indexed_through)`;
      return { objectId, inserted };
    });
  } catch (error) {
    throw new QueueConsumerError(
      "QUEUE_CONSUMER_INDEX_FAILED",
      `index ${object.key} (version ${object.versionId}): ${sqlMessage(error)}`,
      { subject: object.key, canRetry: canRetryIndex(error), cause: error },
    );
  }
}
