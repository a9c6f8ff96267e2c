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
 * The records above each partition's `marks.indexed_through` (docs/audit-storage.md, "Freshness"), by tenant.
 * `add` keeps a line the writer would index; `advanceMarks` drops what the index now holds; `snapshot` answers a
 * query's part of the tail in the index's `(time, id)` order, one record per `(time, id)`.
 */
export class TailStore {
  private readonly byTenant = new Map<string, TailRecord[]>();
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
    if (list) list.push(record);
    else this.byTenant.set(record.tenantId, [record]);
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
    for (const [tenant, list] of this.byTenant) {
      const kept = list.filter((r) => r.offset > (this.marks.get(r.partition) ?? -1n));
      this.count -= list.length - kept.length;
      if (kept.length === 0) this.byTenant.delete(tenant);
      else if (kept.length !== list.length) this.byTenant.set(tenant, kept);
    }
  }

  /** The tenant's tail records matching `query`, sorted by `(time, id)`, one per `(time, id)`. */
  snapshot(tenantId: string, query: AuditQuery): TailRecord[] {
    const list = this.byTenant.get(tenantId);
    if (!list) return [];
    const matching = list.filter(
      (r) =>
        compareUtc(r.time, query.start) >= 0 &&
        compareUtc(r.time, query.end) < 0 &&
        (query.principalId === undefined || r.principalId === query.principalId) &&
        (query.action === undefined || r.action === query.action) &&
        (query.result === undefined || r.result === query.result) &&
        (query.resourcePrefix === undefined || r.resource.startsWith(query.resourcePrefix)),
    );
    matching.sort(compareTimeId);
    return matching.filter((r, i) => i === 0 || compareTimeId(r, matching[i - 1] as TailRecord) !== 0);
  }
}
