import { compareRawPosition, microsTime } from "./micro-time.ts";
import type { PagePosition } from "./page-token.ts";

/**
 * A run of an export step: index rows that follow each other in `(time, id)` order and whose lines lie back to back
 * in one object version (each line followed by its newline), read and passed on as one span of bytes.
 */
export interface EventRun {
  readonly bucket: string;
  readonly key: string;
  readonly versionId: string;
  /** The first line's first byte. */
  readonly start: number;
  /** After the last line's newline: the span `[start, end)` holds `lines` newline-terminated lines. */
  readonly end: number;
  readonly lines: number;
  readonly firstId: string;
  /** The run's last row: the keyset position after it (its `time` built when first read). */
  readonly last: PagePosition;
}

/**
 * An export step's rows as one row of columns (`array_agg` / `string_agg` over the page statement's rows): a few
 * arrays for the client to decode instead of an object per row.
 */
export interface StepColumns {
  /** Object ids. */
  o: number[] | null;
  /** Byte starts. */
  s: number[] | null;
  /** Byte lengths. */
  l: ArrayLike<number> | null;
  /** Epoch µs (times before 2106), else null. */
  us: (number | null)[] | null;
  /** The later times as text, in order (the rows whose `us` is null). */
  t: string[] | null;
  /** The ids, newline-separated (or as an array, when an id holds a newline). */
  ids: string | string[] | null;
}

/** A run of a step before its object is looked up. */
export interface StepRun {
  objectId: number;
  start: number;
  end: number;
  lines: number;
  firstId: string;
  last: PagePosition;
}

/** A run's last row as a page position: the time string built when first read. */
class RunEnd implements PagePosition {
  #time: string | null;
  constructor(
    readonly id: string,
    private readonly micros: number | null,
    time: string | null,
  ) {
    this.#time = time;
  }

  get time(): string {
    this.#time ??= microsTime(Math.round(this.micros as number));
    return this.#time;
  }
}

/**
 * The ids of a step, or undefined when the newline-joined form cannot be split back (an id holding a newline: the
 * caller asks for them as an array).
 */
export function stepIds(columns: StepColumns, rows: number): string[] | undefined {
  const { ids } = columns;
  if (Array.isArray(ids)) return ids;
  if (rows === 0) return [];
  const split = (ids ?? "").split("\n");
  return split.length === rows ? split : undefined;
}

/**
 * Groups a step's rows (in `(time, id)` order, as the page statement's `ORDER BY … LIMIT` feeds the aggregate) into
 * runs: a row starts a new run when its object differs from the row before or its line does not start right after
 * that row's line and newline (gaps and islands). Undefined when the rows are not in order: the text times are
 * matched to the last rows by position, which holds only in order, so the caller refuses the step.
 */
export function groupRuns(columns: StepColumns, ids: readonly string[]): StepRun[] | undefined {
  const o = columns.o ?? [];
  const s = columns.s ?? [];
  const l = columns.l ?? [];
  const us = columns.us ?? [];
  const rows = o.length;
  // Text times belong to the last rows (they sort after every float time).
  const texts = columns.t ?? [];
  const firstText = rows - texts.length;
  const text = (i: number) => (i >= firstText ? (texts[i - firstText] as string) : null);
  for (let i = 1; i < rows; i++) {
    const order = compareRawPosition(
      us[i - 1] ?? null,
      text(i - 1),
      ids[i - 1] as string,
      us[i] ?? null,
      text(i),
      ids[i] as string,
    );
    if (order > 0) return undefined;
  }
  const runs: StepRun[] = [];
  let first = 0;
  for (let i = 0; i < rows; i++) {
    const end = (s[i] as number) + (l[i] as number) + 1;
    if (i + 1 < rows && o[i + 1] === o[i] && s[i + 1] === end) continue;
    runs.push({
      objectId: o[i] as number,
      start: s[first] as number,
      end,
      lines: i - first + 1,
      firstId: ids[first] as string,
      last: new RunEnd(ids[i] as string, us[i] ?? null, text(i)),
    });
    first = i + 1;
  }
  return runs;
}
