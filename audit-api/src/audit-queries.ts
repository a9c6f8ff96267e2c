import type { S3Client } from "@aws-sdk/client-s3";
import type { QueryLimits } from "./config.ts";
import { AuditApiError } from "./errors.ts";
import type { EventLocation, IndexReader } from "./index-reader.ts";
import { readLines } from "./object-reader.ts";
import type { PageTokens } from "./page-token.ts";
import type { AuditQuery, ListQuery } from "./query-request.ts";

/** One stored record as the API answers it: the JSON object of its line. */
export type StoredRecord = Record<string, unknown>;

export interface ListAnswer {
  totalCount: number;
  events: StoredRecord[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface ExportAnswer {
  /** JSONL: each stored line as written, `\n` after each. */
  data: Uint8Array;
  totalCount: number;
}

/** Rows read from the index per step of an export. */
const EXPORT_STEP = 2_000;
/** A streamed chunk closes at this many bytes (lines are at most 1 MiB: one chunk stays under 4 MiB). */
const CHUNK_BYTES = 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: false });

function parseLine(line: Uint8Array, location: EventLocation): StoredRecord {
  let record: unknown;
  try {
    record = JSON.parse(decoder.decode(line));
  } catch (error) {
    throw new AuditApiError("AUDIT_API_OBJECT_READ_FAILED", `${location.key}: event ${location.id} is not JSON`, {
      subject: location.key,
      cause: error,
    });
  }
  if (typeof record !== "object" || record === null || (record as StoredRecord).id !== location.id) {
    throw new AuditApiError(
      "AUDIT_API_OBJECT_READ_FAILED",
      `${location.key} (version ${location.versionId}) bytes ${location.byteStart}+${location.byteLength} do not hold event ${location.id}`,
      { subject: location.key },
    );
  }
  return record as StoredRecord;
}

/**
 * The query core shared by REST and gRPC: a tenant (always the verified caller's) and a checked request in, exact
 * totals and pages in the stable `(time, id)` order out, events read from the objects the index names.
 */
export class AuditQueries {
  constructor(
    private readonly index: IndexReader,
    private readonly s3: S3Client,
    private readonly tokens: PageTokens,
    private readonly limits: QueryLimits,
  ) {}

  async list(tenantId: string, request: ListQuery): Promise<ListAnswer> {
    const { query, pageSize, pageToken } = request;
    const after = pageToken === "" ? undefined : this.tokens.decode(tenantId, query, pageToken);
    const [totalCount, rows] = await Promise.all([
      this.index.count(tenantId, query),
      this.index.page(tenantId, query, after, pageSize + 1),
    ]);
    const page = rows.slice(0, pageSize);
    const lines = await readLines(this.s3, page, this.limits.rangeMergeBytes);
    const events = page.map((location, i) => parseLine(lines[i] as Uint8Array, location));
    const last = page.at(-1);
    const nextPageToken =
      rows.length > pageSize && last ? this.tokens.encode(tenantId, query, { time: last.time, id: last.id }) : "";
    return { totalCount, events, nextPageToken };
  }

  /**
   * Every matching event as JSONL chunks (each a whole number of lines, about `CHUNK_BYTES`), oldest first: the
   * streaming export, for a range of any size. Memory stays at one index step.
   */
  async *exportChunks(tenantId: string, query: AuditQuery): AsyncGenerator<ExportAnswer> {
    let after: { time: string; id: string } | undefined;
    for (;;) {
      const rows = await this.index.page(tenantId, query, after, EXPORT_STEP);
      if (rows.length === 0) return;
      const lines = await readLines(this.s3, rows, this.limits.rangeMergeBytes);
      let part: Uint8Array[] = [];
      let bytes = 0;
      for (const [i, location] of rows.entries()) {
        const line = lines[i] as Uint8Array;
        parseLine(line, location);
        part.push(line);
        bytes += line.length + 1;
        if (bytes >= CHUNK_BYTES) {
          yield { data: joinLines(part, bytes), totalCount: part.length };
          [part, bytes] = [[], 0];
        }
      }
      if (part.length > 0) yield { data: joinLines(part, bytes), totalCount: part.length };
      const last = rows.at(-1) as EventLocation;
      after = { time: last.time, id: last.id };
      if (rows.length < EXPORT_STEP) return;
    }
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

/** Lines joined, each followed by `\n`. */
function joinLines(lines: readonly Uint8Array[], bytes: number): Uint8Array {
  const data = new Uint8Array(bytes);
  let offset = 0;
  for (const line of lines) {
    data.set(line, offset);
    offset += line.length;
    data[offset++] = 0x0a;
  }
  return data;
}

function tooLarge(size: string, limit: string): AuditApiError {
  return new AuditApiError(
    "AUDIT_API_EXPORT_TOO_LARGE",
    `the range holds ${size}, above the largest unary export (${limit}); use the streaming export ` +
      "(gRPC export_events_stream, or POST /v2/audit/events/export answering application/x-ndjson)",
    { subject: "end_time" },
  );
}
