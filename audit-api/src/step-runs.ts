import { microsTime } from "./micro-time.ts";
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

/** `id`s in the C collation's order (UTF-8 bytes); plain JS order when both are ASCII. */
function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
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
 * Groups a step's rows (in `(time, id)` order; checked here, sorted when PostgreSQL answered them otherwise) into
 * runs: a row starts a new run when its object differs from the row before or its line does not start right after
 * that row's line and newline (gaps and islands).
 */
export function groupRuns(columns: StepColumns, ids: readonly string[]): StepRun[] {
  const o = columns.o ?? [];
  const s = columns.s ?? [];
  const l = columns.l ?? [];
  const us = columns.us ?? [];
  const rows = o.length;
  // Text times belong to the last rows (they sort after every float time).
  const texts = columns.t ?? [];
  const firstText = rows - texts.length;
  const text = (i: number) => (i >= firstText ? (texts[i - firstText] as string) : null);
  const compare = (a: number, b: number): number => {
    const ua = us[a] ?? null;
    const ub = us[b] ?? null;
    if (ua !== null && ub !== null && ua !== ub) return ua - ub;
    if (ua === null && ub !== null) return 1;
    if (ua !== null && ub === null) return -1;
    if (ua === null && ub === null && text(a) !== text(b)) return (text(a) as string) < (text(b) as string) ? -1 : 1;
    return compareIds(ids[a] as string, ids[b] as string);
  };
  let order: number[] | undefined;
  for (let i = 1; i < rows; i++) {
    if (compare(i - 1, i) > 0) {
      order = Array.from({ length: rows }, (_, k) => k).sort(compare);
      break;
    }
  }
  const at = (k: number) => (order ? (order[k] as number) : k);
  const runs: StepRun[] = [];
  let first = 0;
  for (let k = 0; k < rows; k++) {
    const i = at(k);
    const next = k + 1 < rows ? at(k + 1) : -1;
    const end = (s[i] as number) + (l[i] as number) + 1;
    if (next >= 0 && o[next] === o[i] && s[next] === end) continue;
    const head = at(first);
    runs.push({
      objectId: o[i] as number,
      start: s[head] as number,
      end,
      lines: k - first + 1,
      firstId: ids[head] as string,
      last: new RunEnd(ids[i] as string, us[i] ?? null, text(i)),
    });
    first = k + 1;
  }
  return runs;
}
