import type { BlockCache } from "./block-cache.ts";
import { AuditApiError } from "./errors.ts";
import { checkLineId } from "./line-check.ts";
import { fetchReads } from "./object-reader.ts";
import { planReads } from "./read-plan.ts";
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
  const source = () => ({ key: run.key, versionId: run.versionId, bytes: `${run.start}-${run.end}` });
  checkLineId(bytes.subarray(0, bytes.indexOf(0x0a)), run.firstId, source);
  checkLineId(bytes.subarray(lastStart, bytes.length - 1), run.last.id, source);
  return { bytes, lines, marks };
}

/**
 * The bytes of each run of an export step, in their order, checked (`checkRun`): one ranged GET per object version
 * span (neighbouring runs merged), a few at once (`fetchReads`), not through the block cache (an export reads its bytes
 * once); gzip objects, read whole, through `decoded` (the export's own, so that its steps share one GET each).
 */
export async function readRuns(
  objects: VersionReader,
  runs: readonly EventRun[],
  mergeBytes: number,
  decoded?: BlockCache,
): Promise<RunBytes[]> {
  const answers: RunBytes[] = new Array(runs.length);
  // A run is a span of its object version already: neighbours closer than mergeBytes share one GET.
  await fetchReads(
    objects,
    planReads(runs, (run) => run, mergeBytes),
    (read, body, base) => {
      for (const index of read.indices) {
        const run = runs[index] as EventRun;
        answers[index] = checkRun(body.subarray(run.start - base, run.end - base), run);
      }
    },
    { decoded },
  );
  return answers;
}
