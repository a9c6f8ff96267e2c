import type { SQL } from "bun";
import { QueueConsumerError } from "./errors.ts";
import type { SealedBatch } from "./partition-batch.ts";
import { integerArrayLiteral, textArrayLiteral } from "./pg-array-literal.ts";
import type { WrittenObject } from "./put-batch-object.ts";

/** Events per INSERT statement: one huge statement grows slower than linearly (its CTEs spill to disk). */
const EVENTS_PER_STATEMENT = 10_000;

/**
 * Origin of the rollups' bins: `date_bin` to a UTC midnight before any time `timestamptz` accepts from a record
 * (year 1) is `date_trunc(…, 'UTC')` — timestamps have no leap seconds — without a time zone lookup per row.
 */
const UTC_ORIGIN = "0001-01-01T00:00:00Z";

type TextColumn = "id" | "tenant_id" | "time" | "principal_id" | "action" | "result" | "resource";

export interface IndexedBatch {
  objectId: bigint;
  /** Event rows really inserted (the others were indexed before: a duplicate shipped or written twice). */
  inserted: number;
}

function sqlMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether the index write may succeed later: a connection or server-side transient failure. */
function canRetryIndex(error: unknown): boolean {
  const code = (error as { errno?: unknown; code?: unknown }).errno ?? (error as { code?: unknown }).code;
  // SQLSTATE classes 22 (data exception), 23 (constraint) and 42 (syntax, undefined object) do not heal by
  // themselves; every other failure (connection lost, 40001/40P01, 53xxx resources, 57P01 shutdown) may.
  if (typeof code === "string" && /^(22|23|42)[0-9A-Z]{3}$/.test(code)) return false;
  return true;
}

/**
 * Indexes one written batch in one transaction (docs/audit-storage.md, "Write, per batch, after the PUT"):
 * the `objects` row; the event rows in bulk (`unnest` of column arrays) with `ON CONFLICT (tenant_id, time, id) DO NOTHING`, so an
 * event indexed before keeps its first (object, byte range); the `counts` (minute) and `counts_hour` rollups of exactly
 * the rows inserted, in the same statement; and
 * `marks.indexed_through` (never lowered: a former owner of the partition may finish a batch after the new one).
 * Run again for the same object version, it inserts nothing new. Throws `QUEUE_CONSUMER_INDEX_FAILED`.
 */
export async function writeBatchIndex(
  sql: SQL,
  schema: string,
  batch: SealedBatch,
  object: WrittenObject,
): Promise<IndexedBatch> {
  const table = (name: string) => sql(`${schema}.${name}`);
  const events = batch.events;
  try {
    return await sql.begin(async (tx) => {
      const [row] = await tx`
        INSERT INTO ${table("objects")} (bucket, key, version_id, topic, partition, first_offset, last_offset,
                                        records, bytes, min_time, max_time)
        VALUES (${object.bucket}, ${object.key}, ${object.versionId}, ${batch.topic}, ${batch.partition},
                ${batch.firstOffset.toString()}::bigint, ${batch.lastOffset.toString()}::bigint, ${batch.records},
                ${object.bytes}, ${batch.minTime ?? null}::timestamptz, ${batch.maxTime ?? null}::timestamptz)
        ON CONFLICT (bucket, key, version_id) DO UPDATE SET records = excluded.records
        RETURNING object_id::text AS object_id`;
      const objectId = BigInt((row as { object_id: string }).object_id);
      let inserted = 0;
      for (let start = 0; start < events.length; start += EVENTS_PER_STATEMENT) {
        const chunk = events.slice(start, start + EVENTS_PER_STATEMENT);
        const text = (key: TextColumn) =>
          textArrayLiteral(
            chunk.map((event) => event[key]),
            batch.backslashes,
          );
        const integer = (key: "byte_start" | "byte_length") => integerArrayLiteral(chunk.map((event) => event[key]));
        const [counted] = await tx`
          WITH input AS (
            SELECT * FROM unnest(${text("id")}::text[], ${text("tenant_id")}::text[], ${text("time")}::text[],
                                 ${text("principal_id")}::text[], ${text("action")}::text[], ${text("result")}::text[],
                                 ${text("resource")}::text[], ${integer("byte_start")}::bigint[],
                                 ${integer("byte_length")}::int[])
              AS u(id, tenant_id, time, principal_id, action, result, resource, byte_start, byte_length)
          ), inserted AS (
            INSERT INTO ${table("events")} (id, tenant_id, time, principal_id, action, result, resource, object_id,
                                            byte_start, byte_length)
            SELECT id, tenant_id, time::timestamptz, principal_id, action, result, resource,
                   ${objectId.toString()}::bigint, byte_start, byte_length
            FROM input
            ON CONFLICT (tenant_id, time, id) DO NOTHING
            RETURNING tenant_id, time, principal_id, action, result
          ), rolled AS (
            INSERT INTO ${table("counts")} AS c (tenant_id, minute, principal_id, action, result, n)
            SELECT tenant_id, date_bin('1 minute', time, ${UTC_ORIGIN}::timestamptz), principal_id, action, result, count(*)
            FROM inserted
            GROUP BY 1, 2, 3, 4, 5
            ON CONFLICT (tenant_id, minute, principal_id, action, result) DO UPDATE SET n = c.n + excluded.n
          ), hourly AS (
            INSERT INTO ${table("counts_hour")} AS h (tenant_id, hour, principal_id, action, result, n)
            SELECT tenant_id, date_bin('1 hour', time, ${UTC_ORIGIN}::timestamptz), principal_id, action, result, count(*)
            FROM inserted
            GROUP BY 1, 2, 3, 4, 5
            ON CONFLICT (tenant_id, hour, principal_id, action, result) DO UPDATE SET n = h.n + excluded.n
          )
          -- rolled and hourly run to completion unread (PostgreSQL runs every data-modifying WITH once)
          SELECT (SELECT count(*) FROM inserted)::int AS inserted`;
        inserted += (counted as { inserted: number }).inserted;
      }
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
