import { BlockCache } from "./block-cache.ts";
import type { QueryLimits } from "./config.ts";
import { AuditApiError } from "./errors.ts";
import { type EventLocation, type IndexReader, TAIL_KEYS_PER_STATEMENT } from "./index-reader.ts";
import { type ExportAnswer, JsonlChunks } from "./jsonl-chunks.ts";
import { checkLineId } from "./line-check.ts";
import { compareTimeId } from "./micro-time.ts";
import { type ReadCaches, readLines } from "./object-reader.ts";
import type { PagePosition, PageTokens } from "./page-token.ts";
import type { AuditQuery, ListQuery } from "./query-request.ts";
import { type RunBytes, readRuns } from "./run-reader.ts";
import type { EventRun } from "./step-runs.ts";
import type { TailRecord, TailStore } from "./tail-store.ts";
import type { VersionReader } from "./version-reader.ts";

/** One stored record as the API answers it: the JSON object of its line. */
export type StoredRecord = Record<string, unknown>;

export interface ListAnswer {
  totalCount: number;
  /** The page's stored lines (each one JSON object, exactly as written, no newline), in order. */
  lines: Uint8Array[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export type { ExportAnswer } from "./jsonl-chunks.ts";

/** One answered event: where the index says it is, or the freshness tail's record. */
type Entry = { location: EventLocation; tail?: undefined } | { tail: TailRecord; location?: undefined };

const positionOf = (entry: Entry): PagePosition => (entry.location ?? entry.tail) as PagePosition;

/**
 * Rows read from the index per step of an export. The steps are sequential (keyset: each starts after the last
 * row of the one before), so each step's round trip, statement start and GET are on the export's critical path:
 * 8 000 exported faster than 2 000 in the bench. Since exports read runs (one GET per run, few arrays per step) the
 * per-step cost is the round trip, and on a quiet machine 16 000 beat 8 000 (best of 3: 191.0 / 198.7 / 146.3 against
 * 152.6 / 164.3 MiB/s, API 3.1 against 3.6 ms and PostgreSQL 3.5 against 4.3 ms CPU per MiB; 32 000 no better:
 * 136.4 / 188.2). Memory: EXPORT_AHEAD steps of lines in flight, about 12 MiB at 260-byte lines.
 */
const EXPORT_STEP = 16_000;
/** Export steps whose objects are read at once (the index is read ahead of the objects by this many steps). */
const EXPORT_AHEAD = 3;
/** A streamed chunk closes at this many bytes (lines are at most 1 MiB: one chunk stays under 4 MiB). */
const CHUNK_BYTES = 1024 * 1024;
/** Decoded gzip objects one export keeps (a writer's object is at most its batch size, 16 MiB by default). */
const EXPORT_DECODED_BYTES = 48 * 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: false });

/** The parsed records of a page's lines (for transports that re-encode them, gRPC). */
export function recordsOf(lines: readonly Uint8Array[]): StoredRecord[] {
  return lines.map((line) => JSON.parse(decoder.decode(line)) as StoredRecord);
}

/** Checks that `line` holds the event the index names (`checkLineId`'s errors). */
function checkLine(line: Uint8Array, location: EventLocation): void {
  checkLineId(line, location.id, () => ({
    key: location.key,
    versionId: location.versionId,
    bytes: `${location.byteStart}+${location.byteLength}`,
  }));
}

/**
 * The index's rows after `after`, read `step` at a time; with `readAhead` the next rows are read while these are
 * handled (an export; a list stops within its first rows: it would waste a read).
 */
async function* indexRows(
  reader: IndexReader,
  tenantId: string,
  query: AuditQuery,
  after: PagePosition | undefined,
  step: number,
  readAhead: boolean,
): AsyncGenerator<EventLocation> {
  let next: Promise<EventLocation[]> | undefined = reader.page(tenantId, query, after, step);
  while (next) {
    const rows: EventLocation[] = await next;
    const more = rows.length === step;
    const nextPage = () => reader.page(tenantId, query, rows.at(-1), step);
    next = more && readAhead ? nextPage() : undefined;
    next?.catch(() => {}); // awaited above on the next turn; not an unhandled rejection if the consumer stops
    yield* rows;
    if (more && !next) next = nextPage();
  }
}

/**
 * Index rows and fresh tail records (both sorted) merged in `(time, id)` order after `after`; an event in both comes
 * once, as the index's.
 */
async function* mergeSorted(
  rows: AsyncIterable<EventLocation> | Iterable<EventLocation>,
  fresh: readonly TailRecord[],
  after: PagePosition | undefined,
): AsyncGenerator<Entry> {
  let t = 0;
  if (after) while (t < fresh.length && compareTimeId(fresh[t] as TailRecord, after) <= 0) t++;
  for await (const location of rows) {
    while (t < fresh.length && compareTimeId(fresh[t] as TailRecord, location) < 0)
      yield { tail: fresh[t++] as TailRecord };
    if (t < fresh.length && compareTimeId(fresh[t] as TailRecord, location) === 0) t++;
    yield { location };
  }
  while (t < fresh.length) yield { tail: fresh[t++] as TailRecord };
}

/** The first `n` entries of `entries` (a list's page and the one after it that says a next page exists). */
async function firstEntries(entries: AsyncIterable<Entry>, n: number): Promise<Entry[]> {
  const taken: Entry[] = [];
  for await (const entry of entries) {
    taken.push(entry);
    if (taken.length >= n) break;
  }
  return taken;
}

/**
 * The query core shared by REST and gRPC: a tenant (always the verified caller's) and a checked request in, exact
 * totals and pages in the stable `(time, id)` order out, events read from the objects the index names — merged,
 * when a freshness tail is there, with the records the index does not hold yet (docs/audit-storage.md,
 * "Freshness").
 */
export class AuditQueries {
  constructor(
    private readonly index: IndexReader,
    private readonly objects: VersionReader,
    private readonly tokens: PageTokens,
    private readonly limits: QueryLimits,
    private readonly tail?: TailStore,
    /** Object blocks kept for lists (an export reads past it). */
    private readonly cache?: BlockCache,
    /** Index rows per export step (tests cross step boundaries with a few rows). */
    private readonly exportStep = EXPORT_STEP,
  ) {
    if (!(exportStep >= 1)) throw new RangeError("AuditQueries: exportStep ≥ 1");
  }

  /**
   * The tail's records for the query that `reader` (read after this snapshot was taken) does not hold. Taken
   * before any index read of the query: what left the tail earlier is in the index by then.
   */
  private async freshTail(reader: IndexReader, tenantId: string, snapshot: TailRecord[]): Promise<TailRecord[]> {
    if (snapshot.length === 0) return snapshot;
    const indexed = await reader.indexed(tenantId, snapshot);
    return indexed.size === 0 ? snapshot : snapshot.filter((_, i) => !indexed.has(i));
  }

  /**
   * Index rows (fetched `step` at a time after `after`) and fresh tail records merged in `(time, id)` order; an
   * event in both (indexed meanwhile) comes once, as the index's.
   */
  private merged(
    reader: IndexReader,
    tenantId: string,
    query: AuditQuery,
    after: PagePosition | undefined,
    fresh: readonly TailRecord[],
    step: number,
    readAhead = false,
  ): AsyncGenerator<Entry> {
    return mergeSorted(indexRows(reader, tenantId, query, after, step, readAhead), fresh, after);
  }

  /**
   * The lines of `entries`, in order: ranged GETs for indexed ones (through `caches`: the block cache for a list's
   * page), memory for tail ones.
   */
  private async linesOf(entries: readonly Entry[], caches: ReadCaches): Promise<Uint8Array[]> {
    const locations = entries.flatMap((e) => (e.location ? [e.location] : []));
    const read = await readLines(this.objects, locations, this.limits.rangeMergeBytes, caches);
    let i = 0;
    return entries.map((entry) => {
      if (entry.tail) return entry.tail.line;
      const line = read[i++] as Uint8Array;
      checkLine(line, entry.location);
      return line;
    });
  }

  async list(tenantId: string, request: ListQuery): Promise<ListAnswer> {
    const { query, pageSize, pageToken } = request;
    const after = pageToken === "" ? undefined : this.tokens.decode(tenantId, query, pageToken);
    const snapshot = this.tail?.snapshot(tenantId, query) ?? [];
    let totalCount: number;
    let entries: Entry[];
    if (snapshot.length <= TAIL_KEYS_PER_STATEMENT) {
      // One statement, so one snapshot of the index: the count, the page (pageSize + 1 index rows suffice: tail
      // records only add entries) and which tail records the index holds.
      const { total, rows, indexed } = await this.index.countAndPage(tenantId, query, after, pageSize + 1, snapshot);
      const fresh = indexed.size === 0 ? snapshot : snapshot.filter((_, i) => !indexed.has(i));
      totalCount = total + fresh.length;
      entries = await firstEntries(mergeSorted(rows, fresh, after), pageSize + 1);
    } else {
      // A tail too large for one statement's lookup: the count, the page and the lookups in one transaction.
      ({ totalCount, entries } = await this.index.consistent(async (reader) => {
        const fresh = await this.freshTail(reader, tenantId, snapshot);
        const taken = await firstEntries(
          this.merged(reader, tenantId, query, after, fresh, pageSize + 1),
          pageSize + 1,
        );
        return { totalCount: (await reader.count(tenantId, query)) + fresh.length, entries: taken };
      }));
    }
    const page = entries.slice(0, pageSize);
    const lines = await this.linesOf(page, { blocks: this.cache });
    const last = page.at(-1);
    const nextPageToken =
      entries.length > pageSize && last ? this.tokens.encode(tenantId, query, positionOf(last)) : "";
    return { totalCount, lines, nextPageToken };
  }

  /**
   * The index's runs after `after` (`IndexReader.runs`), one export step of `exportStep` rows at a time, the next
   * step read while this one is handled — unless this one reaches `stopAt` (the first fresh tail record: the export
   * goes on row by row from there, so a step read ahead would be thrown away).
   */
  private async *runSteps(tenantId: string, query: AuditQuery, stopAt?: PagePosition): AsyncGenerator<EventRun[]> {
    const step = this.exportStep;
    const read = (after: PagePosition | undefined) => {
      const answer = this.index.runs(tenantId, query, after, step);
      answer.catch(() => {}); // awaited on the next turn; not an unhandled rejection if the consumer stops
      return answer;
    };
    let next: Promise<{ runs: EventRun[]; rows: number }> | undefined = read(undefined);
    while (next) {
      const { runs, rows }: { runs: EventRun[]; rows: number } = await next;
      const last: PagePosition | undefined = runs.at(-1)?.last;
      const more: boolean = rows === step && last !== undefined && !(stopAt && compareTimeId(last, stopAt) >= 0);
      next = more ? read(last) : undefined;
      yield runs;
    }
  }

  /**
   * Every matching event as JSONL chunks (each a whole number of lines, about `CHUNK_BYTES`), oldest first: the
   * streaming export, for a range of any size. Memory stays at `EXPORT_AHEAD` index steps (plus the tail's part).
   *
   * The index's rows come as runs (rows whose lines lie back to back in one object version), whose bytes are passed
   * on as read, checked per run (`checkRun`): no object per event. From the first fresh tail record on (records the
   * index does not hold yet, docs/audit-storage.md, "Freshness"), the rows are merged one by one with the tail's.
   */
  async *exportChunks(tenantId: string, query: AuditQuery): AsyncGenerator<ExportAnswer> {
    const snapshot = this.tail?.snapshot(tenantId, query) ?? [];
    const fresh = await this.freshTail(this.index, tenantId, snapshot);
    const out = new JsonlChunks(CHUNK_BYTES);
    // gzip objects are read whole: the export's own cache lets the steps that fall in one share its GET and decode.
    const decoded = new BlockCache(this.objects, EXPORT_DECODED_BYTES);
    // Runs: every run whose rows all sort before the first fresh record.
    const firstFresh = fresh[0];
    let after: PagePosition | undefined;
    const readingRuns: Promise<RunBytes[]>[] = [];
    const emitRuns = function* (runs: RunBytes[]): Generator<ExportAnswer> {
      for (const run of runs) yield* out.run(run);
    };
    for await (const runs of this.runSteps(tenantId, query, firstFresh)) {
      const cut = firstFresh ? runs.findIndex((run) => compareTimeId(run.last, firstFresh) >= 0) : -1;
      const before = cut === -1 ? runs : runs.slice(0, cut);
      if (before.length > 0) {
        const read = readRuns(this.objects, before, this.limits.rangeMergeBytes, decoded);
        read.catch(() => {}); // awaited in order below; a failure surfaces there, not as an unhandled rejection
        readingRuns.push(read);
        after = (before.at(-1) as EventRun).last;
      }
      if (cut !== -1) break;
      if (readingRuns.length >= EXPORT_AHEAD) yield* emitRuns(await (readingRuns.shift() as Promise<RunBytes[]>));
    }
    while (readingRuns.length > 0) yield* emitRuns(await (readingRuns.shift() as Promise<RunBytes[]>));
    if (fresh.length > 0) {
      // From the first fresh record on: index rows one by one, merged with the tail's records.
      let step: Entry[] = [];
      // Steps whose objects are being read while the next index rows are fetched (at most EXPORT_AHEAD at once).
      const reading: Promise<Uint8Array[]>[] = [];
      const startStep = () => {
        const lines = this.linesOf(step, { decoded });
        lines.catch(() => {}); // awaited in order below; a failure surfaces there, not as an unhandled rejection
        reading.push(lines);
        step = [];
      };
      const emit = function* (lines: Uint8Array[]): Generator<ExportAnswer> {
        for (const line of lines) yield* out.line(line);
      };
      for await (const entry of this.merged(this.index, tenantId, query, after, fresh, this.exportStep, true)) {
        step.push(entry);
        if (step.length >= this.exportStep) {
          startStep();
          if (reading.length >= EXPORT_AHEAD) yield* emit(await (reading.shift() as Promise<Uint8Array[]>));
        }
      }
      if (step.length > 0) startStep();
      while (reading.length > 0) yield* emit(await (reading.shift() as Promise<Uint8Array[]>));
    }
    yield* out.end();
  }

  /**
   * Every matching event as JSONL, for the unary export. Refused with `AUDIT_API_EXPORT_TOO_LARGE` above the
   * configured events or bytes (a unary message is held whole by both ends).
   */
  async export(tenantId: string, query: AuditQuery): Promise<ExportAnswer> {
    const total = await this.index.count(tenantId, query);
    const { maxExportEvents, maxExportBytes } = this.limits;
    if (total > maxExportEvents) throw tooLarge(`${total} events`, `${maxExportEvents} events`);
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    let count = 0;
    for await (const chunk of this.exportChunks(tenantId, query)) {
      bytes += chunk.data.length;
      count += chunk.totalCount;
      if (bytes > maxExportBytes) throw tooLarge(`more than ${maxExportBytes} bytes`, `${maxExportBytes} bytes`);
      if (count > maxExportEvents) throw tooLarge(`more than ${maxExportEvents} events`, `${maxExportEvents} events`);
      chunks.push(chunk.data);
    }
    return { data: Buffer.concat(chunks, bytes), totalCount: count };
  }
}

function tooLarge(size: string, limit: string): AuditApiError {
  return new AuditApiError(
    "AUDIT_API_EXPORT_TOO_LARGE",
    `the range holds ${size}, above the largest unary export (${limit}); use the streaming export ` +
      "(gRPC export_events_stream, or POST /v2/audit/events/export answering application/x-ndjson)",
    { subject: "end_time" },
  );
}
