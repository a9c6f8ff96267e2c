import type { RunBytes } from "./run-reader.ts";

export interface ExportAnswer {
  /** JSONL: each stored line as written, `\n` after each. */
  data: Uint8Array;
  totalCount: number;
}

const NEWLINE = new Uint8Array([0x0a]);

/**
 * Cuts an export's JSONL into chunks of whole lines of half to about one `chunkBytes` each: a run's checked bytes are
 * cut at its marks (`RunBytes.marks`, a subarray, no copy, when a chunk is one piece) and single lines (the
 * freshness tail and the per-row path) are collected; a chunk of several pieces is joined once.
 */
export class JsonlChunks {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private lines = 0;

  constructor(private readonly chunkBytes: number) {}

  private add(part: Uint8Array, lines: number): void {
    this.parts.push(part);
    this.bytes += part.length;
    this.lines += lines;
  }

  private take(): ExportAnswer {
    const data = this.parts.length === 1 ? (this.parts[0] as Uint8Array) : Buffer.concat(this.parts, this.bytes);
    const answer = { data, totalCount: this.lines };
    [this.parts, this.bytes, this.lines] = [[], 0, 0];
    return answer;
  }

  /** One stored line (without its newline). */
  *line(line: Uint8Array): Generator<ExportAnswer> {
    this.add(line, 1);
    this.add(NEWLINE, 0);
    if (this.bytes >= this.chunkBytes) yield this.take();
  }

  /**
   * A run's lines, as read and checked. A chunk that already holds half its size closes before the run (then the
   * chunks of a long run are single pieces of it: no copy to join them).
   */
  *run(run: RunBytes): Generator<ExportAnswer> {
    if (this.bytes >= this.chunkBytes / 2) yield this.take();
    const { bytes, marks } = run;
    let from = 0;
    let linesFrom = 0;
    for (let i = 0; i < marks.length; i += 2) {
      const at = marks[i] as number;
      if (this.bytes + at - from < this.chunkBytes) continue;
      const lines = marks[i + 1] as number;
      this.add(bytes.subarray(from, at), lines - linesFrom);
      yield this.take();
      [from, linesFrom] = [at, lines];
    }
    this.add(bytes.subarray(from), run.lines - linesFrom);
    if (this.bytes >= this.chunkBytes) yield this.take();
  }

  /** The last, short chunk (none when it would be empty). */
  *end(): Generator<ExportAnswer> {
    if (this.lines > 0) yield this.take();
  }
}
