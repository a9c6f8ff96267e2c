import { ExpiringLru } from "@svc/common";
import { BIN_ORIGIN } from "@svc/queue-consumer";
import type { SQL } from "bun";
import { AuditApiError } from "./errors.ts";
import { compareRawPosition, compareTimeId, microsTime } from "./micro-time.ts";
import type { PagePosition } from "./page-token.ts";
import type { AuditQuery } from "./query-request.ts";
import type { RollupSum, RollupSums } from "./rollup-sums.ts";
import { type EventRun, groupRuns, type StepColumns, stepIds } from "./step-runs.ts";

/** Where one indexed event's line lies: an object version and a byte range of its uncompressed JSONL. */
export interface EventLocation {
  readonly id: string;
  /** UTC with microseconds, the index's value (page tokens carry it). */
  readonly time: string;
  readonly bucket: string;
  readonly key: string;
  readonly versionId: string;
  readonly byteStart: number;
  readonly byteLength: number;
}

/** An `objects` row: the object version an event's bytes are in (never changed once written). */
interface StoredObject {
  bucket: string;
  key: string;
  versionId: string;
}

/** A page row: its time string is built when first read (most rows of an export never need it). */
class IndexedEvent implements EventLocation {
  readonly bucket: string;
  readonly key: string;
  readonly versionId: string;
  #time: string | null;

  constructor(
    readonly id: string,
    /** Epoch microseconds (as float8 seconds × 10⁶: rounded here), or null when `time` came as text. */
    private readonly micros: number | null,
    time: string | null,
    object: StoredObject,
    readonly byteStart: number,
    readonly byteLength: number,
  ) {
    this.#time = time;
    this.bucket = object.bucket;
    this.key = object.key;
    this.versionId = object.versionId;
  }

  get time(): string {
    this.#time ??= microsTime(Math.round(this.micros as number));
    return this.#time;
  }
}

/**
 * Before this time, `date_part('epoch', time) * 1e6` (float8) is within 0.49 µs of the exact microseconds, so
 * rounding it gives them: below 2^32 s the seconds' half-ulp is ≤ 0.24 µs and the product's ≤ 0.25 µs. Later times
 * (not expected in an audit trail, but valid) come as `to_char` text.
 */
const FLOAT_TIME_BEFORE = "2106-01-01T00:00:00Z";
const timeText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const TIME_TEXT = timeText("e.time");

/** A page row as selected. */
interface PageRow {
  id: string;
  /** Epoch µs as float8 (times before FLOAT_TIME_BEFORE), else null. */
  us: number | null;
  /** The time as text (times from FLOAT_TIME_BEFORE on), else null. */
  t: string | null;
  object_id: number;
  byte_start: number;
  byte_length: number;
}

/** A count's row (`IndexReader.countParts`): numbers as text. */
interface CountRow {
  edges: string;
  rolled: string | null;
  fp: string | null;
}

/** Whether page rows are in `(time, id)` order (`compareTimeId`'s), read from their raw columns. */
export function inPageOrder(rows: readonly PageRow[]): boolean {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1] as PageRow;
    const b = rows[i] as PageRow;
    if (compareRawPosition(a.us, a.t, a.id, b.us, b.t, b.id) > 0) return false;
  }
  return true;
}

/** `objects` rows kept by id (immutable: kept until pushed out by newer ones). */
const OBJECTS_KEPT = 10_000;
const OBJECT_TTL_MS = 24 * 3_600_000;

/** Tail keys looked up per statement (`indexed`, `countAndPage`). */
export const TAIL_KEYS_PER_STATEMENT = 10_000;

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

/** The minute boundary at or before a normalised UTC time (`YYYY-MM-DDTHH:MM:00Z`). */
const minuteFloor = (t: string) => `${t.slice(0, 16)}:00Z`;
/** Whether a normalised UTC time is a minute boundary. */
const onMinuteBoundary = (t: string) => /^:00(\.0*)?Z$/.test(t.slice(16));
/** The minute boundary after `boundary`. */
const nextMinute = (boundary: string) => minuteFloor(new Date(Date.parse(boundary) + MINUTE_MS).toISOString());

/** The first whole minute at or after `time` and the last minute boundary at or before `end` (UTC strings). */
export function wholeMinutes(start: string, end: string): { from: string; to: string } {
  const startFloor = minuteFloor(start);
  return { from: onMinuteBoundary(start) ? startFloor : nextMinute(startFloor), to: minuteFloor(end) };
}

/**
 * The minute boundaries between which a count sums the rollups: each end of `[start, end)` goes to its nearer minute
 * boundary (a tie, or an end on a boundary, goes inward), so that the exact `count(*)` over the events between an
 * end and its boundary reads at most half a minute of them (before: up to a whole minute, half on average). An
 * outward end's events are in the rollup's minute but outside the range: the count subtracts them. `from >= to`:
 * no whole minute to sum (the caller counts the range itself).
 */
export function nearestMinutes(
  start: string,
  end: string,
): { from: string; to: string; startOutward: boolean; endOutward: boolean } {
  const inward = wholeMinutes(start, end);
  const startFloor = minuteFloor(start);
  const endCeil = onMinuteBoundary(end) ? inward.to : nextMinute(inward.to);
  // Milliseconds decide the side only (an unparsable time: inward); the boundaries themselves are exact strings.
  const startOutward = !onMinuteBoundary(start) && Date.parse(start) - Date.parse(startFloor) < MINUTE_MS / 2;
  const endOutward = !onMinuteBoundary(end) && Date.parse(endCeil) - Date.parse(end) < MINUTE_MS / 2;
  return {
    from: startOutward ? startFloor : inward.from,
    to: endOutward ? endCeil : inward.to,
    startOutward,
    endOutward,
  };
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
  private readonly tenants: string;
  private readonly principalEvents: string;
  private readonly counts: string;
  private readonly countsHour: string;
  private readonly objects: string;
  private readonly marks: string;

  constructor(
    private readonly sql: SQL,
    private readonly schema: string,
    /** Rollup sums kept under the index's fingerprint (none: every count sums the rollups). */
    private readonly rollupSums?: RollupSums,
    /** Shared by the transaction-bound readers of `consistent`. */
    private readonly objectRows = new ExpiringLru<StoredObject>({ maxEntries: OBJECTS_KEPT, ttlMs: OBJECT_TTL_MS }),
  ) {
    if (!IDENTIFIER.test(schema)) {
      throw new AuditApiError("AUDIT_API_CONFIG_INVALID", `bad schema name ${JSON.stringify(schema)}`, {
        subject: "SVC_AUDIT_INDEX_SCHEMA",
      });
    }
    this.events = `"${schema}".events`;
    this.tenants = `"${schema}".tenants`;
    this.principalEvents = `"${schema}".principal_events`;
    this.counts = `"${schema}".counts`;
    this.countsHour = `"${schema}".counts_hour`;
    this.objects = `"${schema}".objects`;
    this.marks = `"${schema}".marks`;
  }

  /**
   * The tenant's key in `events` (schema version 6: docs/audit-storage.md, "Tenant keys"), for `tenant`, a parameter
   * reference: a one-row subquery, evaluated once per statement; NULL, so that no event matches, for a tenant the
   * index has never seen.
   */
  private tenantKey(tenant: string): string {
    return `(SELECT tenant_key FROM ${this.tenants} WHERE tenant_id = ${tenant})`;
  }

  private filters(statement: Statement, query: AuditQuery, alias: string, withResource: boolean): string {
    let text = "";
    if (query.principalId !== undefined) text += ` AND ${alias}principal_id = ${statement.param(query.principalId)}`;
    return text + this.eventFilters(statement, query, alias, withResource);
  }

  /** The filters other than the principal's (the columns of `events` that postings do not hold). */
  private eventFilters(statement: Statement, query: AuditQuery, alias: string, withResource: boolean): string {
    let text = "";
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
          return await work(new IndexReader(tx as unknown as SQL, this.schema, this.rollupSums, this.objectRows));
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

  /**
   * The exact number of the tenant's events matching `query` as SQL of `s` (each event id counts once):
   * `counts_hour` over whole hours, `counts` over the whole minutes at the ends, `count(*)` of the partial ones.
   * `from` is a one-row subquery with the columns `edges` (the partial minutes' count), `rolled` (the rollups' sum,
   * NULL when the kept sum is still exact) and `fp` (the index's fingerprint, when sums are kept); `total` reads
   * the answer from that row and keeps a newly read sum.
   */
  private countParts(
    s: Statement,
    tenantId: string,
    query: AuditQuery,
  ): { from: string; total: (row: CountRow) => number } {
    const tenant = s.param(tenantId);
    const rangeCount = (from: string, to: string) => {
      if (query.principalId === undefined) {
        return (
          `(SELECT count(*) FROM ${this.events} WHERE tenant_key = ${this.tenantKey(tenant)}` +
          ` AND time >= ${s.param(from)}::timestamptz` +
          ` AND time < ${s.param(to)}::timestamptz${this.filters(s, query, "", true)})`
        );
      }
      // the principal's postings; their events' rows only when another filter needs their columns
      const others = this.eventFilters(s, query, "e.", true);
      const range = (at: string) => `${s.param(at)}::timestamptz`;
      const posted = this.postings(tenant, s.param(query.principalId), range(from), range(to), others !== "");
      return `(SELECT count(*) ${posted}${others})`;
    };
    const rolled = (table: string, column: string, from: string, to: string) =>
      `(SELECT coalesce(sum(n), 0) FROM ${table} WHERE tenant_id = ${tenant}` +
      ` AND ${column} >= ${s.param(from)}::timestamptz AND ${column} < ${s.param(to)}::timestamptz` +
      `${this.filters(s, query, "", false)})`;
    const minutes = nearestMinutes(query.start, query.end);
    const hours = wholeHours(minutes.from, minutes.to);
    const edges: string[] = [];
    const rollups: string[] = [];
    if (query.resourcePrefix !== undefined || minutes.from >= minutes.to) {
      edges.push(rangeCount(query.start, query.end));
    } else {
      edges.push(
        minutes.startOutward ? `- ${rangeCount(minutes.from, query.start)}` : rangeCount(query.start, minutes.from),
        minutes.endOutward ? `- ${rangeCount(query.end, minutes.to)}` : `+ ${rangeCount(minutes.to, query.end)}`,
      );
      if (hours.from >= hours.to) {
        rollups.push(rolled(this.counts, "minute", minutes.from, minutes.to));
      } else {
        rollups.push(
          rolled(this.countsHour, "hour", hours.from, hours.to),
          rolled(this.counts, "minute", minutes.from, hours.from),
          rolled(this.counts, "minute", hours.to, minutes.to),
        );
      }
    }
    const edgeSum = `(${edges.join(" ")})::text AS edges`;
    const rollupSum = rollups.length === 0 ? "NULL::numeric" : `(${rollups.join(" + ")})`;
    const key =
      rollups.length === 0 || this.rollupSums === undefined
        ? undefined
        : JSON.stringify([tenantId, query.principalId, query.action, query.result, minutes, hours]);
    if (key === undefined) {
      return {
        from: `(SELECT ${edgeSum}, ${rollupSum}::text AS rolled, NULL::text AS fp)`,
        total: (row) => Number(row.edges) + Number(row.rolled ?? 0),
      };
    }
    const sums = this.rollupSums as RollupSums;
    const kept = sums.get(key);
    // `fp` is read in the statement's own snapshot; the rollups run only when it differs from the kept sum's (their
    // subqueries are init plans, evaluated when the CASE needs them).
    const fingerprint =
      `(SELECT coalesce(max(object_id), 0) FROM ${this.objects})::text || '/' ||` +
      ` coalesce((SELECT string_agg(topic || ':' || partition || ':' || indexed_through, ',' ORDER BY topic, partition)` +
      ` FROM ${this.marks}), '')`;
    return {
      from:
        `(SELECT ${edgeSum}, CASE WHEN f.fp = ${s.param(kept?.fingerprint ?? "")} THEN NULL ELSE ${rollupSum} END::text` +
        ` AS rolled, f.fp FROM (SELECT ${fingerprint} AS fp OFFSET 0) f)`,
      total: (row) => {
        if (row.rolled === null) return Number(row.edges) + (kept as RollupSum).n;
        const n = Number(row.rolled);
        sums.set(key, { fingerprint: row.fp as string, n });
        return Number(row.edges) + n;
      },
    };
  }

  /** Exact number of the tenant's events matching `query`; each event id counts once. */
  async count(tenantId: string, query: AuditQuery): Promise<number> {
    const s = new Statement();
    const parts = this.countParts(s, tenantId, query);
    try {
      const rows = (await this.sql.unsafe(`SELECT * FROM ${parts.from} c`, s.params)) as CountRow[];
      return parts.total(rows[0] as CountRow);
    } catch (error) {
      throw indexFailed("count", error);
    }
  }

  /**
   * `FROM … WHERE …` of a principal's events with times in `[from, to)` through its postings (docs/audit-storage.md,
   * "Principal postings"): `p` the postings row, `u` its (time, id) pairs, and `e` their `events` rows by the key when
   * `withEvents` (for their columns or other filters). `tenant` and `principal` are parameter references, `from`
   * and `to` `timestamptz` expressions. A postings row's minute holds only times of that minute, so the range's
   * minutes bound the postings read.
   */
  private postings(tenant: string, principal: string, from: string, to: string, withEvents: boolean): string {
    const events = withEvents
      ? ` JOIN ${this.events} e ON e.tenant_key = ${this.tenantKey(tenant)} AND e.time = u.time AND e.id = u.id`
      : "";
    return (
      `FROM ${this.principalEvents} p CROSS JOIN LATERAL unnest(p.times, p.ids) AS u(time, id)${events}` +
      ` WHERE p.tenant_id = ${tenant} AND p.principal_id = ${principal}` +
      ` AND p.minute >= date_bin('1 minute', ${from}, '${BIN_ORIGIN}') AND p.minute < ${to}` +
      ` AND u.time >= ${from} AND u.time < ${to}`
    );
  }

  /**
   * The page statement's text: rows carry the time as epoch microseconds (or text) and their object's id (`raw`:
   * the columns as stored, for a statement that reads them further).
   */
  private pageText(
    s: Statement,
    tenantId: string,
    query: AuditQuery,
    after: PagePosition | undefined,
    limit: number,
    raw = false,
  ): string {
    const columns = raw
      ? "e.time, e.id, e.object_id, e.byte_start, e.byte_length"
      : `e.id, CASE WHEN e.time < '${FLOAT_TIME_BEFORE}' THEN date_part('epoch', e.time) * 1000000 END AS us,` +
        ` CASE WHEN e.time >= '${FLOAT_TIME_BEFORE}' THEN ${TIME_TEXT} END AS t, e.object_id::float8 AS object_id,` +
        " e.byte_start::float8 AS byte_start, e.byte_length";
    if (query.principalId !== undefined) {
      // The minutes of the principal's postings in order, and per minute (a lateral subquery, kept apart from the
      // outer query by OFFSET 0) its events sorted: the outer sort is then incremental (presorted by minute), and
      // the page stops at its limit within the first minutes instead of joining all of the range's events.
      const tenant = s.param(tenantId);
      const principal = s.param(query.principalId);
      const from = `${s.param(query.start)}::timestamptz`;
      const to = `${s.param(query.end)}::timestamptz`;
      const afterTime = after ? `${s.param(after.time)}::timestamptz` : undefined;
      const minutes =
        `SELECT DISTINCT minute FROM ${this.principalEvents} WHERE tenant_id = ${tenant} AND principal_id = ${principal}` +
        ` AND minute >= date_bin('1 minute', ${afterTime ? `greatest(${from}, ${afterTime})` : from}, '${BIN_ORIGIN}')` +
        ` AND minute < ${to} ORDER BY minute OFFSET 0`;
      let events =
        "SELECT e.time, e.id, e.object_id, e.byte_start, e.byte_length " +
        `${this.postings(tenant, principal, from, to, true)} AND p.minute = m.minute`;
      if (after) events += ` AND (u.time, u.id) > (${afterTime}, ${s.param(after.id)}::text)`;
      events += `${this.eventFilters(s, query, "e.", true)} ORDER BY u.time, u.id OFFSET 0`;
      return (
        `SELECT ${columns} FROM (${minutes}) m CROSS JOIN LATERAL (${events}) e` +
        ` ORDER BY m.minute, e.time, e.id LIMIT ${s.param(limit)}`
      );
    }
    let text =
      `SELECT ${columns} FROM ${this.events} e` +
      ` WHERE e.tenant_key = ${this.tenantKey(s.param(tenantId))} AND e.time >= ${s.param(query.start)}::timestamptz` +
      ` AND e.time < ${s.param(query.end)}::timestamptz`;
    if (after) text += ` AND (e.time, e.id) > (${s.param(after.time)}::timestamptz, ${s.param(after.id)}::text)`;
    return `${text}${this.filters(s, query, "e.", true)} ORDER BY e.time, e.id LIMIT ${s.param(limit)}`;
  }

  /**
   * The next `limit` rows after `after` (the page statement's rows) as runs, in order (`groupRuns`): the rows come
   * as one row of arrays (`StepColumns`), so an export step costs the client a few array decodes instead of an
   * object per event. (PostgreSQL could group them itself with `lag`/`lead` and a running count, but its window
   * functions cost 2–3× the page's CPU: docs/audit-storage.md, "Pages and exports".) The runs' rows sum to `limit`
   * unless the range ends in this step.
   */
  async runs(
    tenantId: string,
    query: AuditQuery,
    after: PagePosition | undefined,
    limit: number,
  ): Promise<{ runs: EventRun[]; rows: number }> {
    let columns = await this.stepColumns(tenantId, query, after, limit, false);
    let rows = columns.o?.length ?? 0;
    let ids = stepIds(columns, rows);
    if (!ids) {
      // The ids again as an array: this is a second snapshot, so the step is what it answers (rows included).
      columns = await this.stepColumns(tenantId, query, after, limit, true);
      rows = columns.o?.length ?? 0;
      ids = stepIds(columns, rows) ?? [];
    }
    const grouped = groupRuns(columns, ids);
    if (!grouped) throw indexFailed("runs", new Error("the step's rows did not come in (time, id) order"));
    const objects = await this.objectsOf(grouped.map((run) => ({ id: run.firstId, object_id: run.objectId })));
    const runs = grouped.map((run): EventRun => {
      const object = objects.get(run.objectId) as StoredObject;
      return {
        bucket: object.bucket,
        key: object.key,
        versionId: object.versionId,
        start: run.start,
        end: run.end,
        lines: run.lines,
        firstId: run.firstId,
        last: run.last,
      };
    });
    return { runs, rows };
  }

  /** A step's rows as one row of arrays (`StepColumns`); `idArray`: the ids as `text[]` (one holds a newline). */
  private async stepColumns(
    tenantId: string,
    query: AuditQuery,
    after: PagePosition | undefined,
    limit: number,
    idArray: boolean,
  ): Promise<StepColumns> {
    const s = new Statement();
    const page = this.pageText(s, tenantId, query, after, limit, true);
    const text =
      "SELECT array_agg(p.object_id::float8) AS o, array_agg(p.byte_start::float8) AS s, array_agg(p.byte_length) AS l," +
      ` array_agg(CASE WHEN p.time < '${FLOAT_TIME_BEFORE}' THEN date_part('epoch', p.time) * 1000000 END) AS us,` +
      ` array_agg(${timeText("p.time")}) FILTER (WHERE p.time >= '${FLOAT_TIME_BEFORE}') AS t,` +
      ` ${idArray ? "array_agg(p.id)" : "string_agg(p.id, E'\\n')"} AS ids FROM (${page}) p`;
    try {
      const [row] = (await this.sql.unsafe(text, s.params)) as StepColumns[];
      return row as StepColumns;
    } catch (error) {
      throw indexFailed("runs", error);
    }
  }

  /** Page rows as locations: the objects' bucket, key and version from the cache (one lookup for missing ids). */
  private async locations(rows: readonly PageRow[]): Promise<EventLocation[]> {
    const objects = await this.objectsOf(rows);
    return rows.map(
      (row): EventLocation =>
        new IndexedEvent(
          row.id,
          row.us,
          row.t,
          objects.get(row.object_id) as StoredObject,
          Number(row.byte_start),
          Number(row.byte_length),
        ),
    );
  }

  /**
   * Up to `limit` locations after `after` in `(time, id)` order. The rows carry the time as epoch microseconds and
   * their object's id; the objects' bucket, key and version come from a cache (one lookup for the ids it lacks), not
   * from a join that repeated them on every row.
   */
  async page(tenantId: string, query: AuditQuery, after: PagePosition | undefined, limit: number) {
    const s = new Statement();
    const text = this.pageText(s, tenantId, query, after, limit);
    let rows: PageRow[];
    try {
      rows = (await this.sql.unsafe(text, s.params)) as PageRow[];
    } catch (error) {
      throw indexFailed("page", error);
    }
    return this.locations(rows);
  }

  /**
   * `count` and `page` in one statement (one round trip and one statement for PostgreSQL per list call): the count's
   * row and the page's rows, as a UNION ALL (a join repeated the count's columns on every page row and sorted them
   * again: 18% more PostgreSQL CPU for a page of 100, 30% for 10 000). With `tailKeys` (the freshness tail's `(time, id)`
   * pairs, at most `TAIL_KEYS_PER_STATEMENT`), the same statement — so the same snapshot — also answers which of them
   * the index holds (`indexed`: their positions in `tailKeys`), as `indexed` does.
   */
  async countAndPage(
    tenantId: string,
    query: AuditQuery,
    after: PagePosition | undefined,
    limit: number,
    tailKeys: readonly { time: string; id: string }[] = [],
  ): Promise<{ total: number; rows: EventLocation[]; indexed: Set<number> }> {
    if (tailKeys.length > TAIL_KEYS_PER_STATEMENT) {
      throw new RangeError(`countAndPage: more than ${TAIL_KEYS_PER_STATEMENT} tail keys`);
    }
    const s = new Statement();
    const count = this.countParts(s, tenantId, query);
    const indexedColumn =
      tailKeys.length > 0
        ? `(SELECT jsonb_agg(h.n)::text FROM (${this.heldKeys(s, tenantId, tailKeys)}) h)`
        : "NULL::text";
    // The count's row, then the page's rows (NULL where the other has columns): one statement, one snapshot. The
    // page comes in its order as PostgreSQL runs it; the order is checked here (and sorted only if it did not).
    const text =
      `SELECT c.edges, c.rolled, c.fp, ${indexedColumn} AS indexed, NULL::text AS id, NULL::float8 AS us,` +
      ` NULL::text AS t, NULL::float8 AS object_id, NULL::float8 AS byte_start, NULL::int4 AS byte_length` +
      ` FROM ${count.from} c UNION ALL SELECT NULL, NULL, NULL, NULL, p.* FROM (${this.pageText(s, tenantId, query, after, limit)}) p`;
    let rows: (PageRow & CountRow & { indexed: string | null })[];
    try {
      rows = (await this.sql.unsafe(text, s.params)) as typeof rows;
    } catch (error) {
      throw indexFailed("page", error);
    }
    // The count's row has no id (page rows always have one).
    const [first] = rows.splice(
      rows.findIndex((row) => row.id === null),
      1,
    );
    const total = count.total(first as CountRow);
    const indexed = new Set<number>(first?.indexed ? (JSON.parse(first.indexed) as number[]) : []);
    const locations = await this.locations(rows);
    if (!inPageOrder(rows)) locations.sort(compareTimeId);
    return { total, rows: locations, indexed };
  }

  /** The objects of `rows` by id: from the cache, the missing ones read in one statement. */
  private async objectsOf(rows: readonly { id: string; object_id: number }[]): Promise<Map<number, StoredObject>> {
    const found = new Map<number, StoredObject>();
    const missing = new Set<number>();
    for (const row of rows) {
      if (found.has(row.object_id) || missing.has(row.object_id)) continue;
      const cached = this.objectRows.get(String(row.object_id));
      if (cached) found.set(row.object_id, cached);
      else missing.add(row.object_id);
    }
    if (missing.size === 0) return found;
    let read: { object_id: number; bucket: string; key: string; version_id: string }[];
    try {
      read = (await this.sql.unsafe(
        `SELECT object_id::float8 AS object_id, bucket, key, version_id FROM ${this.objects}` +
          " WHERE object_id = ANY($1::text::int8[])",
        [`{${[...missing].join(",")}}`],
      )) as typeof read;
    } catch (error) {
      throw indexFailed("objects", error);
    }
    for (const row of read) {
      const object = { bucket: row.bucket, key: row.key, versionId: row.version_id };
      this.objectRows.set(String(row.object_id), object);
      found.set(row.object_id, object);
    }
    const orphan = rows.find((row) => !found.has(row.object_id));
    if (orphan) {
      throw new AuditApiError(
        "AUDIT_API_INDEX_FAILED",
        `page: event ${orphan.id} names object ${orphan.object_id}, which the index does not hold`,
        { subject: "page", canRetry: false },
      );
    }
    return found;
  }

  /**
   * SQL of `s` answering which of `keys` (the tenant's `(time, id)` pairs) the index holds: a row `n` (the key's
   * position in `keys`, plus `from`) for each one found, by one `events` primary-key lookup per key.
   */
  private heldKeys(s: Statement, tenantId: string, keys: readonly { time: string; id: string }[], from = 0): string {
    const json = JSON.stringify(keys.map((k, i) => ({ time: k.time, id: k.id, n: from + i })));
    return (
      `SELECT k.n FROM jsonb_to_recordset((${s.param(json)}::text)::jsonb) AS k(time timestamptz, id text, n int)` +
      ` JOIN ${this.events} e ON e.tenant_key = ${this.tenantKey(s.param(tenantId))} AND e.time = k.time AND e.id = k.id`
    );
  }

  /**
   * Which of `keys` (the tenant's `(time, id)` pairs) the index holds: their positions in `keys`, looked up
   * `TAIL_KEYS_PER_STATEMENT` at a time (`countAndPage` asks the same in its own statement).
   */
  async indexed(tenantId: string, keys: readonly { time: string; id: string }[]): Promise<Set<number>> {
    const found = new Set<number>();
    for (let start = 0; start < keys.length; start += TAIL_KEYS_PER_STATEMENT) {
      const s = new Statement();
      const text = this.heldKeys(s, tenantId, keys.slice(start, start + TAIL_KEYS_PER_STATEMENT), start);
      try {
        const rows = (await this.sql.unsafe(text, s.params)) as { n: number }[];
        for (const row of rows) found.add(row.n);
      } catch (error) {
        throw indexFailed("indexed", error);
      }
    }
    return found;
  }
}
