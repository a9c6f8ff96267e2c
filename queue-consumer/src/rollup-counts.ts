import { integerArrayLiteral, textArrayLiteral } from "./pg-array-literal.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** What a rollup counts: one event (n = 1) or a finer rollup's row. */
export interface Counted {
  tenant_id: string;
  principal_id: string;
  action: string;
  result: string;
}

/** One rollup row: the count of a (tenant, principal, action, result) in the bin starting at `bin` (epoch ms). */
export interface RollupRow extends Counted {
  bin: number;
  n: number;
}

type Level<T> = Map<string, T>;

/**
 * Counts per (tenant, principal, action, result, bin) in nested maps, one level per part: a key string built per
 * event (five parts joined, then hashed) was 18 % of the writer's CPU at 75k events/s.
 */
class RollupCounter {
  private readonly root: Level<Level<Level<Level<Map<number, RollupRow>>>>> = new Map();
  readonly rows: RollupRow[] = [];

  add(counted: Counted, bin: number, n: number): void {
    const byPrincipal = childMap(this.root, counted.tenant_id);
    const byAction = childMap(byPrincipal, counted.principal_id);
    const byResult = childMap(byAction, counted.action);
    const byBin = childMap(byResult, counted.result);
    const row = byBin.get(bin);
    if (row) {
      row.n += n;
      return;
    }
    const added: RollupRow = {
      tenant_id: counted.tenant_id,
      principal_id: counted.principal_id,
      action: counted.action,
      result: counted.result,
      bin,
      n,
    };
    byBin.set(bin, added);
    this.rows.push(added);
  }
}

/** The map under `key` in `parent`, added empty when missing (one level of nested grouping maps). */
export function childMap<K, V extends Map<unknown, unknown>>(parent: Map<K, V>, key: K): V {
  let found = parent.get(key);
  if (found === undefined) {
    found = new Map() as V;
    parent.set(key, found);
  }
  return found;
}

/**
 * The minute and hour rollups of `events` (`timeMs`: epoch ms), as PostgreSQL's `date_bin` from a UTC origin bins
 * them (timestamps have no leap seconds, so a minute or an hour from 1970 is one from year 1). The hours are summed
 * from the minutes.
 */
export function rollups(events: readonly (Counted & { timeMs: number })[]): {
  minutes: RollupRow[];
  hours: RollupRow[];
} {
  const minutes = new RollupCounter();
  for (const event of events) minutes.add(event, Math.floor(event.timeMs / MINUTE_MS) * MINUTE_MS, 1);
  const hours = new RollupCounter();
  for (const row of minutes.rows) hours.add(row, Math.floor(row.bin / HOUR_MS) * HOUR_MS, row.n);
  return { minutes: minutes.rows, hours: hours.rows };
}

/** Rollup rows as `unnest` columns (array literals); `backslashes`: whether a string may need escaping. */
export function rollupColumns(
  rows: readonly RollupRow[],
  backslashes: boolean,
): Record<"tenant_id" | "bin" | "principal_id" | "action" | "result" | "n", string> {
  const text = (pick: (row: RollupRow) => string) => textArrayLiteral(rows.map(pick), backslashes);
  return {
    tenant_id: text((row) => row.tenant_id),
    bin: textArrayLiteral(
      rows.map((row) => new Date(row.bin).toISOString()),
      false,
    ),
    principal_id: text((row) => row.principal_id),
    action: text((row) => row.action),
    result: text((row) => row.result),
    n: integerArrayLiteral(rows.map((row) => row.n)),
  };
}
