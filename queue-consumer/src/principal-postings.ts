import type { IndexFields } from "./index-fields.ts";
import { BinaryCopyRows } from "./pg-binary-copy.ts";
import { childMap } from "./rollup-counts.ts";

/** A minute in `timestamptz`'s microseconds (from 2000-01-01 UTC, itself a minute boundary). */
const MINUTE_MICROS = 60_000_000;

/** A likely size of one event in a postings row: its time (12 bytes) and its id (4 + ~40). */
const BYTES_PER_EVENT = 64;

/** One `principal_events` row: a principal's events of one UTC minute (their times and ids, in chunk order). */
interface Posting {
  tenant_id: string;
  principal_id: string;
  /** The minute's start, in microseconds from 2000-01-01 UTC. */
  minute: number;
  times: number[];
  ids: string[];
}

/**
 * The chunk's principal postings (docs/audit-storage.md, "Principal postings") as the rows of `COPY
 * principal_events (tenant_id, principal_id, minute, times, ids) FROM STDIN (FORMAT binary)`: one row per tenant,
 * principal and UTC minute, holding the times and ids of those events. `micros`: each event's time in microseconds
 * from 2000-01-01 UTC (the event rows' `pgMicros`), whose minute is the one `date_bin` from year 1 gives. Grouped in
 * nested maps, as the rollups are (a key string per event costs more than the lookups).
 */
export function principalPostingRows(chunk: readonly IndexFields[], micros: readonly number[]): Buffer {
  const byTenant = new Map<string, Map<string, Map<number, Posting>>>();
  const postings: Posting[] = [];
  for (let i = 0; i < chunk.length; i += 1) {
    const event = chunk[i] as IndexFields;
    const time = micros[i] as number;
    const minute = Math.floor(time / MINUTE_MICROS) * MINUTE_MICROS;
    const byMinute = childMap(childMap(byTenant, event.tenant_id), event.principal_id);
    let posting = byMinute.get(minute);
    if (posting === undefined) {
      posting = { tenant_id: event.tenant_id, principal_id: event.principal_id, minute, times: [], ids: [] };
      byMinute.set(minute, posting);
      postings.push(posting);
    }
    posting.times.push(time);
    posting.ids.push(event.id);
  }
  const rows = new BinaryCopyRows(chunk.length * BYTES_PER_EVENT);
  for (const posting of postings) {
    rows.row(5);
    rows.text(posting.tenant_id);
    rows.text(posting.principal_id);
    // a minute's start can lie up to a minute beyond a safe integer (the earliest times, 1714): as a bigint
    rows.bigint64(BigInt(posting.minute));
    rows.timestamptzArray(posting.times);
    rows.textArray(posting.ids);
  }
  return rows.end();
}
