import { AuditApiError } from "./errors.ts";
import { checkLineId } from "./line-check.ts";
import { fetchRange } from "./object-reader.ts";
import type { EventRun } from "./step-runs.ts";
import type { VersionReader } from "./version-reader.ts";

/** A run's bytes, checked against the index: `lines` newline-terminated lines, passed on as they are. */
export interface RunBytes {
  bytes: Uint8Array;
  lines: number;
  /**
   * Where the bytes may be cut into chunks: pairs (offset just after a newline, lines before it), about every
   * `MARK_BYTES` — found while the lines are counted, so cutting needs no second pass.
   */
  marks: number[];
}

/** Bytes between two marks of a run (a chunk closes at the first mark past its size). */
export const MARK_BYTES = 64 * 1024;

/** GETs running at once for one export step. */
const CONCURRENCY = 8;

/** One GET: a span of one object version holding the spans of some runs (neighbours merged). */
interface SpanRead {
  bucket: string;
  key: string;
  versionId: string;
  start: number;
  end: number;
  runs: number[];
}

/**
 * Groups runs by object version and merges spans closer than `mergeBytes` into one GET, as `planReads` does for
 * single lines (docs/audit-storage.md, "Pages and exports"); a gzip object is read whole, once.
 */
function planSpans(runs: readonly EventRun[], mergeBytes: number): SpanRead[] {
  const byVersion = new Map<string, number[]>();
  runs.forEach((run, index) => {
    const id = `${run.bucket}\u0000${run.key}\u0000${run.versionId}`;
    const list = byVersion.get(id);
    if (list) list.push(index);
    else byVersion.set(id, [index]);
  });
  const reads: SpanRead[] = [];
  for (const list of byVersion.values()) {
    list.sort((a, b) => (runs[a] as EventRun).start - (runs[b] as EventRun).start);
    const whole = (runs[list[0] as number] as EventRun).key.endsWith(".gz");
    let current: SpanRead | undefined;
    for (const index of list) {
      const run = runs[index] as EventRun;
      if (current && (whole || run.start - current.end <= mergeBytes)) {
        current.end = Math.max(current.end, run.end);
        current.runs.push(index);
        continue;
      }
      current = {
        bucket: run.bucket,
        key: run.key,
        versionId: run.versionId,
        start: run.start,
        end: run.end,
        runs: [index],
      };
      reads.push(current);
    }
  }
  return reads;
}

function mismatch(run: EventRun, what: string): AuditApiError {
  return new AuditApiError(
    "AUDIT_API_OBJECT_READ_FAILED",
    `${run.key} (version ${run.versionId}) bytes ${run.start}-${run.end}: ${what}`,
    { subject: run.key },
  );
}

/**
 * Checks that `bytes` (a run's span) hold what the index says: exactly `run.lines` lines, each ended by a newline
 * (counted natively, `Bun.indexOfLine`), the first holding `run.firstId` and the last `run.last.id` (the lines
 * between are not parsed). `AUDIT_API_OBJECT_READ_FAILED` otherwise.
 */
export function checkRun(bytes: Uint8Array, run: EventRun): RunBytes {
  if (bytes.length !== run.end - run.start) throw mismatch(run, `short read (${bytes.length} bytes)`);
  if (bytes[bytes.length - 1] !== 0x0a) throw mismatch(run, "the last line has no newline");
  const marks: number[] = [];
  let lines = 0;
  let lineStart = 0;
  let lastStart = 0;
  let nextMark = MARK_BYTES;
  for (;;) {
    const newline = Bun.indexOfLine(bytes, lineStart);
    if (newline < 0) break;
    lines++;
    lastStart = lineStart;
    lineStart = newline + 1;
    if (lineStart >= nextMark && lineStart < bytes.length) {
      marks.push(lineStart, lines);
      nextMark = lineStart + MARK_BYTES;
    }
  }
  if (lines !== run.lines) throw mismatch(run, `${lines} lines where the index has ${run.lines} events`);
  const source = { key: run.key, versionId: run.versionId, bytes: `${run.start}-${run.end}` };
  checkLineId(bytes.subarray(0, bytes.indexOf(0x0a)), run.firstId, source);
  checkLineId(bytes.subarray(lastStart, bytes.length - 1), run.last.id, source);
  return { bytes, lines, marks };
}

/**
 * The bytes of each run of an export step, in their order, checked (`checkRun`): one ranged GET per object version
 * span (neighbouring runs merged), `CONCURRENCY` at once, not through the block cache (an export reads its bytes
 * once).
 */
export async function readRuns(
  objects: VersionReader,
  runs: readonly EventRun[],
  mergeBytes: number,
): Promise<RunBytes[]> {
  const answers: RunBytes[] = new Array(runs.length);
  const reads = planSpans(runs, mergeBytes);
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const read = reads[next++] as SpanRead;
      const body = await fetchRange(objects, read);
      const base = read.key.endsWith(".gz") ? 0 : read.start;
      for (const index of read.runs) {
        const run = runs[index] as EventRun;
        answers[index] = checkRun(body.subarray(run.start - base, run.end - base), run);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, reads.length) }, worker));
  return answers;
}
