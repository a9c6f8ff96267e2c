import type { SQL } from "bun";
import { AuditApiError } from "./errors.ts";
import type { PagePosition } from "./page-token.ts";
import type { AuditQuery } from "./query-request.ts";

/** Where one indexed event's line lies: an object version and a byte range of its uncompressed JSONL. */
export interface EventLocation {
  id: string;
  /** UTC with microseconds, the index's value (page tokens carry it). */
  time: string;
  bucket: string;
  key: string;
  versionId: string;
  byteStart: number;
  byteLength: number;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

function indexFailed(what: string, error: unknown): AuditApiError {
  const code = (error as { errno?: unknown; code?: unknown }).errno ?? (error as { code?: unknown }).code;
  const permanent = typeof code === "string" && /^(22|23|42)[0-9A-Z]{3}$/.test(code);
  const message = error instanceof Error ? error.message : String(error);
  return new AuditApiError("AUDIT_API_INDEX_FAILED", `${what}: ${message}`, {
    subject: what,
    canRetry: !permanent,
    cause: error,
  });
}

/** The first whole minute at or after `time` and the last minute boundary at or before `end` (UTC strings). */
export function wholeMinutes(start: string, end: string): { from: string; to: string } {
  const floor = (t: string) => `${t.slice(0, 16)}:00Z`;
  const startFloor = floor(start);
  const onBoundary = /^:00(\.0*)?Z$/.test(start.slice(16));
  const from = onBoundary ? startFloor : floor(new Date(Date.parse(startFloor) + MINUTE_MS).toISOString());
  return { from, to: floor(end) };
}

/**
 * Within the whole minutes `[from, to)` (minute boundaries, as `wholeMinutes` gives them), the whole UTC hours:
 * the first hour boundary at or after `from` and the last at or before `to`. Empty (`from >= to`) when the minutes
 * hold no whole hour.
 */
export function wholeHours(from: string, to: string): { from: string; to: string } {
  const floor = (t: string) => `${t.slice(0, 13)}:00:00Z`;
  const fromFloor = floor(from);
  const start = from === fromFloor ? fromFloor : floor(new Date(Date.parse(fromFloor) + HOUR_MS).toISOString());
  return { from: start, to: floor(to) };
}

/** SQL text with numbered parameters, built from trusted fragments only (values always go to `params`). */
class Statement {
  readonly params: unknown[] = [];
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
}

/**
 * Reads the index the writer keeps (docs/audit-storage.md, "Index"): exact counts from the `counts_hour` rollup over
 * whole hours, the `counts` rollup over the whole minutes at each end and `count(*)` on `events` for the partial
 * minutes at each end, and keyset pages on `(time, id)`.
 * Every statement is bounded by the tenant.
 */
export class IndexReader {
  private readonly events: string;
  private readonly counts: string;
  private readonly countsHour: string;
  private readonly objects: string;

  constructor(
    private readonly sql: SQL,
    private readonly schema: string,
  ) {
    if (!IDENTIFIER.test(schema)) {
      throw new AuditApiError("AUDIT_API_CONFIG_INVALID", `bad schema name ${JSON.stringify(schema)}`, {
        subject: "SVC_AUDIT_INDEX_SCHEMA",
      });
    }
    this.events = `"${schema}".events`;
    this.counts = `"${schema}".counts`;
    this.countsHour = `"${schema}".counts_hour`;
    this.objects = `"${schema}".objects`;
  }

  private filters(statement: Statement, query: AuditQuery, alias: string, withResource: boolean): string {
    let text = "";
    if (query.principalId !== undefined) text += ` AND ${alias}principal_id = ${statement.param(query.principalId)}`;
    if (query.action !== undefined) text += ` AND ${alias}action = ${statement.param(query.action)}`;
    if (query.result !== undefined) text += ` AND ${alias}result = ${statement.param(query.result)}`;
    if (withResource && query.resourcePrefix !== undefined) {
      text += ` AND starts_with(${alias}resource, ${statement.param(query.resourcePrefix)})`;
    }
    return text;
  }

  /**
   * Runs `work` on a reader bound to one REPEATABLE READ, READ ONLY transaction: every statement sees the same
   * snapshot of the index (a count, a page and a lookup that must agree with each other).
   */
  async consistent<T>(work: (reader: IndexReader) => Promise<T>): Promise<T> {
    let failed: unknown;
    try {
      return await this.sql.begin(async (tx) => {
        await tx.unsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        try {
          return await work(new IndexReader(tx as unknown as SQL, this.schema));
        } catch (error) {
          failed = error;
          throw error;
        }
      });
    } catch (error) {
      if (failed !== undefined && error === failed) throw error;
      throw indexFailed("transaction", error);
    }
  }

  /** Exact number of the tenant's events matching `query`; each event id counts once. */
  async count(tenantId: string, query: AuditQuery): Promise<number> {
    const s = new Statement();
    const tenant = s.param(tenantId);
    const rangeCount = (from: string, to: string) =>
      `(SELECT count(*) FROM ${this.events} WHERE tenant_id = ${tenant} AND time >= ${s.param(from)}::timestamptz` +
      ` AND time < ${s.param(to)}::timestamptz${this.filters(s, query, "", true)})`;
    const rolled = (table: string, column: string, from: string, to: string) =>
      `(SELECT coalesce(sum(n), 0) FROM ${table} WHERE tenant_id = ${tenant}` +
      ` AND ${column} >= ${s.param(from)}::timestamptz AND ${column} < ${s.param(to)}::timestamptz` +
      `${this.filters(s, query, "", false)})`;
    const minutes = wholeMinutes(query.start, query.end);
    const hours = wholeHours(minutes.from, minutes.to);
    const parts: string[] = [];
    if (query.resourcePrefix !== undefined || minutes.from >= minutes.to) {
      parts.push(rangeCount(query.start, query.end));
    } else {
      parts.push(rangeCount(query.start, minutes.from), rangeCount(minutes.to, query.end));
      if (hours.from >= hours.to) {
        parts.push(rolled(this.counts, "minute", minutes.from, minutes.to));
      } else {
        parts.push(
          rolled(this.countsHour, "hour", hours.from, hours.to),
          rolled(this.counts, "minute", minutes.from, hours.from),
          rolled(this.counts, "minute", hours.to, minutes.to),
        );
      }
    }
    const text = `SELECT (${parts.join(" + ")})::text AS n`;
    try {
      const rows = (await this.sql.unsafe(text, s.params)) as { n: string }[];
      return Number(rows[0]?.n ?? 0);
    } catch (error) {
      throw indexFailed("count", error);
    }
  }

  /** Up to `limit` locations after `after` in `(time, id)` order. */
  async page(tenantId: string, query: AuditQuery, after: PagePosition | undefined, limit: number) {
    const s = new Statement();
    let text =
      `SELECT e.id, to_char(e.time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time,` +
      ` e.byte_start::float8 AS byte_start, e.byte_length, o.bucket, o.key, o.version_id` +
      ` FROM ${this.events} e JOIN ${this.objects} o ON o.object_id = e.object_id` +
      ` WHERE e.tenant_id = ${s.param(tenantId)} AND e.time >= ${s.param(query.start)}::timestamptz` +
      ` AND e.time < ${s.param(query.end)}::timestamptz`;
    if (after) text += ` AND (e.time, e.id) > (${s.param(after.time)}::timestamptz, ${s.param(after.id)}::text)`;
    text += `${this.filters(s, query, "e.", true)} ORDER BY e.time, e.id LIMIT ${s.param(limit)}`;
    try {
      const rows = (await this.sql.unsafe(text, s.params)) as {
        id: string;
        time: string;
        byte_start: number;
        byte_length: number;
        bucket: string;
        key: string;
        version_id: string;
      }[];
      return rows.map(
        (row): EventLocation => ({
          id: row.id,
          time: row.time,
          bucket: row.bucket,
          key: row.key,
          versionId: row.version_id,
          byteStart: Number(row.byte_start),
          byteLength: Number(row.byte_length),
        }),
      );
    } catch (error) {
      throw indexFailed("page", error);
    }
  }

  /**
   * Which of `keys` (the tenant's `(time, id)` pairs, times as the index prints them) the index holds: the keys of
   * the `events` primary key found, as `time|id`.
   */
  async indexed(tenantId: string, keys: readonly { time: string; id: string }[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < keys.length; start += 10_000) {
      const chunk = keys.slice(start, start + 10_000).map((k) => ({ time: k.time, id: k.id }));
      const text =
        `SELECT to_char(e.time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time, e.id` +
        ` FROM jsonb_to_recordset(($2::text)::jsonb) AS k(time timestamptz, id text)` +
        ` JOIN ${this.events} e ON e.tenant_id = $1 AND e.time = k.time AND e.id = k.id`;
      try {
        const rows = (await this.sql.unsafe(text, [tenantId, JSON.stringify(chunk)])) as { time: string; id: string }[];
        for (const row of rows) found.add(`${row.time}|${row.id}`);
      } catch (error) {
        throw indexFailed("indexed", error);
      }
    }
    return found;
  }
}
