import { indexFields } from "@svc/queue-consumer";
import { compareTimeId, microTime } from "./micro-time.ts";
import type { AuditQuery } from "./query-request.ts";
import { compareUtc } from "./rfc3339.ts";

/** One record read from the topic's tail and not yet known to be indexed. */
export interface TailRecord {
  id: string;
  /** UTC with microseconds, as the index prints it. */
  time: string;
  tenantId: string;
  principalId: string;
  action: string;
  result: string;
  resource: string;
  partition: number;
  offset: bigint;
  /** The line as the agent sent it (the bytes the object will hold). */
  line: Buffer;
}

/**
 * The records above each partition's `marks.indexed_through` (docs/audit-storage.md, "Freshness"), by tenant and by
 * (tenant, principal), each list kept in the index's `(time, id)` order as records arrive (mostly in order: an
 * append; a late one is inserted after its equals). `add` keeps a line the writer would index; `advanceMarks` drops
 * what the index now holds from both; `snapshot` binary-searches the query's time range in the principal's list (a
 * principal filter) or the tenant's, filters the rest and answers one record per `(time, id)`: its cost follows
 * the range, not the tail's size.
 */
export class TailStore {
  private readonly byTenant = new Map<string, TailRecord[]>();
  /** The same records again, per tenant then principal. */
  private readonly byPrincipal = new Map<string, Map<string, TailRecord[]>>();
  private readonly marks = new Map<number, bigint>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The first offset of `partition` the tail needs: its mark + 1 (undefined without a mark). */
  markOf(partition: number): bigint | undefined {
    return this.marks.get(partition);
  }

  /** Adds one line read at (partition, offset); false when it is indexed already or the writer would skip it. */
  add(partition: number, offset: bigint, line: Buffer): boolean {
    const mark = this.marks.get(partition);
    if (mark !== undefined && offset <= mark) return false;
    const fields = indexFields(line);
    if (!fields) return false;
    let time: string;
    try {
      time = microTime(fields.time);
    } catch {
      return false;
    }
    const record: TailRecord = {
      id: fields.id,
      time,
      tenantId: fields.tenant_id,
      principalId: fields.principal_id,
      action: fields.action,
      result: fields.result,
      resource: fields.resource,
      partition,
      offset,
      line,
    };
    const list = this.byTenant.get(record.tenantId);
    if (list) insertSorted(list, record);
    else this.byTenant.set(record.tenantId, [record]);
    let principals = this.byPrincipal.get(record.tenantId);
    if (!principals) {
      principals = new Map();
      this.byPrincipal.set(record.tenantId, principals);
    }
    const own = principals.get(record.principalId);
    if (own) insertSorted(own, record);
    else principals.set(record.principalId, [record]);
    this.count++;
    return true;
  }

  /** Raises the marks (never lowers one) and drops every record at or below its partition's mark. */
  advanceMarks(marks: ReadonlyMap<number, bigint>): void {
    let raised = false;
    for (const [partition, mark] of marks) {
      const current = this.marks.get(partition);
      if (current === undefined || mark > current) {
        this.marks.set(partition, mark);
        raised = true;
      }
    }
    if (!raised) return;
    const above = (r: TailRecord) => r.offset > (this.marks.get(r.partition) ?? -1n);
    for (const [tenant, list] of this.byTenant) {
      const kept = list.filter(above);
      this.count -= list.length - kept.length;
      if (kept.length === 0) this.byTenant.delete(tenant);
      else if (kept.length !== list.length) this.byTenant.set(tenant, kept);
    }
    for (const [tenant, principals] of this.byPrincipal) {
      for (const [principal, list] of principals) {
        const kept = list.filter(above);
        if (kept.length === 0) principals.delete(principal);
        else if (kept.length !== list.length) principals.set(principal, kept);
      }
      if (principals.size === 0) this.byPrincipal.delete(tenant);
    }
  }

  /** The tenant's tail records matching `query`, sorted by `(time, id)`, one per `(time, id)`. */
  snapshot(tenantId: string, query: AuditQuery): TailRecord[] {
    const list =
      query.principalId === undefined
        ? this.byTenant.get(tenantId)
        : this.byPrincipal.get(tenantId)?.get(query.principalId);
    if (!list) return [];
    const from = firstAt(list, (r) => compareUtc(r.time, query.start) >= 0);
    const to = firstAt(list, (r) => compareUtc(r.time, query.end) >= 0, from);
    const matching: TailRecord[] = [];
    for (let i = from; i < to; i++) {
      const r = list[i] as TailRecord;
      if (
        (query.action === undefined || r.action === query.action) &&
        (query.result === undefined || r.result === query.result) &&
        (query.resourcePrefix === undefined || r.resource.startsWith(query.resourcePrefix)) &&
        (matching.length === 0 || compareTimeId(r, matching[matching.length - 1] as TailRecord) !== 0)
      )
        matching.push(r);
    }
    return matching;
  }
}

/** The first index of `list` in `[low, high]` where `reached` holds (it holds from some index on), or `high`. */
function firstAt(
  list: readonly TailRecord[],
  reached: (r: TailRecord) => boolean,
  low = 0,
  high = list.length,
): number {
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (reached(list[mid] as TailRecord)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Inserts `record` into `list` (in `(time, id)` order) after every record that sorts before or with it. A record
 * arriving late is mostly late by little (another partition's batch), so the place is searched from the end in
 * doubling steps, then bisected: compares grow with how late it is, not with the list's length.
 */
function insertSorted(list: TailRecord[], record: TailRecord): void {
  const last = list[list.length - 1];
  if (last === undefined || compareTimeId(last, record) <= 0) {
    list.push(record);
    return;
  }
  // list[high] and what follows sort after `record`.
  let high = list.length - 1;
  let step = 1;
  let low = high - step;
  while (low > 0 && compareTimeId(list[low] as TailRecord, record) > 0) {
    high = low;
    step *= 2;
    low = high - step;
  }
  const at = firstAt(list, (r) => compareTimeId(r, record) > 0, Math.max(low, 0), high);
  list.splice(at, 0, record);
}
