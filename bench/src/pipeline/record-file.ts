import { closeSync, openSync, writeSync } from "node:fs";
import { recordLines } from "./generate-records.ts";

const CHUNK = 10_000;

/** Writes `count` records to `path` as fast as it can (the throughput rows' input); returns the bytes written. */
export function writeRecordFile(path: string, run: string, count: number, firstSeq = 0): number {
  const fd = openSync(path, "w");
  let bytes = 0;
  try {
    for (let seq = firstSeq; seq < firstSeq + count; seq += CHUNK) {
      const text = recordLines(run, seq, Math.min(CHUNK, firstSeq + count - seq), Date.now());
      const buffer = Buffer.from(text);
      writeSync(fd, buffer);
      bytes += buffer.length;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

export interface PacedResult {
  records: number;
  bytes: number;
  ms: number;
  /** The largest gap between when a tick was due and when it wrote (how far the writer fell behind). */
  maxLagMs: number;
}

/**
 * Appends records to `path` at `rate` per second for `seconds`: every tick writes the records due by then, each
 * stamped with the time of that write (the latency rows measure from this `time`). `onTick` sees the progress.
 */
export async function writeAtRate(
  path: string,
  run: string,
  rate: number,
  seconds: number,
  options: { firstSeq?: number; tickMs?: number; onTick?: (written: number) => void } = {},
): Promise<PacedResult> {
  const tickMs = options.tickMs ?? 10;
  const total = Math.round(rate * seconds);
  const fd = openSync(path, "a");
  const start = performance.now();
  let written = 0;
  let bytes = 0;
  let maxLagMs = 0;
  try {
    while (written < total) {
      const elapsed = performance.now() - start;
      const due = Math.min(total, Math.floor((elapsed * rate) / 1000));
      if (due > written) {
        const dueSince = start + (written * 1000) / rate;
        maxLagMs = Math.max(maxLagMs, performance.now() - dueSince);
        const buffer = Buffer.from(recordLines(run, (options.firstSeq ?? 0) + written, due - written, Date.now()));
        writeSync(fd, buffer);
        bytes += buffer.length;
        written = due;
        options.onTick?.(written);
      }
      await Bun.sleep(tickMs);
    }
  } finally {
    closeSync(fd);
  }
  return { records: written, bytes, ms: performance.now() - start, maxLagMs };
}
