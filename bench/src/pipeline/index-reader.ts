import { checkPrincipalPostings, type PostingsCheck } from "@svc/queue-consumer";
import { SQL } from "bun";
import type { Histogram } from "./percentiles.ts";
import type { DurableObject } from "./sustained-rate.ts";

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads what the consumer wrote into its index schema (docs/audit-storage.md, "Index"): an `objects` row per
 * durable object (its `written_at` is when S3 acknowledged the PUT, on the writer's clock: the moment the object
 * was durable, to the millisecond) and an `events` row per stored event id.
 */
export class IndexReader {
  private readonly sql: SQL;

  constructor(
    pgUrl: string,
    readonly schema: string,
  ) {
    if (!IDENTIFIER.test(schema)) throw new Error(`bad schema name ${schema}`);
    this.sql = new SQL({ url: pgUrl, max: 2 });
  }

  private table(name: "objects" | "events"): string {
    return `"${this.schema}"."${name}"`;
  }

  /**
   * Records in durable objects, each offset once: per partition, the union of the objects' offset ranges (sorted by
   * first offset, each adds what passes the furthest offset before it). A retried batch's second object, or a batch
   * cut anew after a rebalance over part of another, adds nothing: summed `records` counted them twice and could
   * stop a section's clock before every record was durable. The distinct ids confirm at the end (`storedCount`).
   */
  async durableRecords(): Promise<number> {
    const rows = await this.sql.unsafe(
      `SELECT coalesce(sum(greatest(0, last_offset - greatest(first_offset - 1, coalesce(reach, -1)))), 0)::bigint AS n
         FROM (SELECT first_offset, last_offset,
                      max(last_offset) OVER (PARTITION BY topic, partition ORDER BY first_offset, last_offset
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
                 FROM ${this.table("objects")}) ranges`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Records in durable objects counted as written: a batch written twice (retried, re-read) counts twice. */
  async recordsInObjects(): Promise<number> {
    const rows = await this.sql.unsafe(`SELECT coalesce(sum(records), 0)::bigint AS n FROM ${this.table("objects")}`);
    return Number(rows[0]?.n ?? 0);
  }

  /** Every object written: when S3 acknowledged it (`written_at`, epoch ms) and its records, for `sustainedRate`. */
  async durableObjects(): Promise<DurableObject[]> {
    const rows = await this.sql.unsafe(
      `SELECT (extract(epoch FROM written_at) * 1000)::float8 AS at, records FROM ${this.table("objects")}`,
    );
    return rows.map((row: { at: number; records: number }) => ({ atMs: Number(row.at), records: Number(row.records) }));
  }

  /**
   * Offsets no object holds below the last one written, over every partition (the topic's offsets start at 0): the
   * records the writer never read because Kafka's retention deleted them first (it skips to the earliest kept
   * offset and counts them, `svc_audit_writer_offsets_lost_total`). They will never be durable.
   */
  async skippedOffsets(): Promise<number> {
    const rows = await this.sql.unsafe(
      `SELECT coalesce(sum(greatest(first_offset - coalesce(previous, -1) - 1, 0) + (last_offset - first_offset + 1 - records)), 0)::bigint AS n
         FROM (SELECT first_offset, last_offset, records,
                      lag(last_offset) OVER (PARTITION BY partition ORDER BY first_offset) AS previous
                 FROM ${this.table("objects")}) AS objects`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Per partition, the last offset of any object written (-1 for none). */
  async writtenThrough(): Promise<Map<number, number>> {
    const rows = await this.sql.unsafe(
      `SELECT partition, max(last_offset)::bigint AS last FROM ${this.table("objects")} GROUP BY partition`,
    );
    return new Map(rows.map((r: { partition: number; last: string | number }) => [r.partition, Number(r.last)]));
  }

  /** Distinct event ids indexed whose id starts with `prefix`. */
  async storedCount(prefix = ""): Promise<number> {
    const rows = await this.sql.unsafe(`SELECT count(*)::bigint AS n FROM ${this.table("events")} WHERE id LIKE $1`, [
      `${prefix}%`,
    ]);
    return Number(rows[0]?.n ?? 0);
  }

  /** Whole milliseconds from each record's `time` (line written) to its object's `written_at` (durable). */
  async latencyHistogram(prefix: string): Promise<Histogram> {
    const rows = await this.sql.unsafe(
      `SELECT floor(extract(epoch FROM (o.written_at - e.time)) * 1000)::bigint AS ms, count(*)::bigint AS n
         FROM ${this.table("events")} e JOIN ${this.table("objects")} o ON o.object_id = e.object_id
        WHERE e.id LIKE $1 GROUP BY 1`,
      [`${prefix}%`],
    );
    const histogram: Histogram = new Map();
    for (const row of rows) histogram.set(Number(row.ms), Number(row.n));
    return histogram;
  }

  /**
   * Per partition, the `max_time` (epoch ms) of every object whose first record is not older than `sinceMs`: the
   * line-written time of the newest record before each cut. It follows the writer's cuts (the cut less the record's
   * pickup) without the PUT's and the index write's jitter, which `written_at` carries (percentiles.ts,
   * `objectsPerHour`).
   */
  async objectCuts(sinceMs: number): Promise<Map<number, number[]>> {
    const rows = await this.sql.unsafe(
      `SELECT partition, (extract(epoch FROM max_time) * 1000)::float8 AS at FROM ${this.table("objects")}
        WHERE min_time >= $1 ORDER BY 1, 2`,
      [new Date(sinceMs).toISOString()],
    );
    const byPartition = new Map<number, number[]>();
    for (const row of rows) {
      const list = byPartition.get(Number(row.partition)) ?? [];
      list.push(Number(row.at));
      byPartition.set(Number(row.partition), list);
    }
    return byPartition;
  }

  /** Every indexed id that starts with `prefix` (the fault loop's ledger). */
  async allIds(prefix: string): Promise<string[]> {
    const rows = await this.sql.unsafe(`SELECT id FROM ${this.table("events")} WHERE id LIKE $1`, [`${prefix}%`]);
    return rows.map((row: { id: string }) => row.id);
  }

  /** How the principal postings match the events (each event in exactly one: `posted` = `events`, no strays). */
  async postings(): Promise<PostingsCheck> {
    return await checkPrincipalPostings(this.sql, this.schema);
  }

  /** Objects written (every version), to count duplicates a retry left. */
  async objectCount(): Promise<number> {
    const rows = await this.sql.unsafe(`SELECT count(*)::bigint AS n FROM ${this.table("objects")}`);
    return Number(rows[0]?.n ?? 0);
  }

  /** Drops the run's schema (the bench's own, random name) and closes the pool. */
  async dropAndClose(): Promise<void> {
    try {
      await this.sql.unsafe(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    } finally {
      await this.sql.close();
    }
  }
}
