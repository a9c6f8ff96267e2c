import type { SQL } from "bun";
import { BIN_ORIGIN, qualifiedTable } from "./index-schema.ts";

/** How an index's principal postings match its events (docs/audit-storage.md, "Principal postings"). */
export interface PostingsCheck {
  /** Event rows. */
  events: number;
  /** Postings elements that name an event of their row's tenant, principal and minute. */
  posted: number;
  /** Postings elements that name none. */
  strays: number;
}

/**
 * Reads how the principal postings match the events: each event is in exactly one posting when `posted` equals
 * `events` and `strays` is 0 (`events` is keyed on `(tenant_key, time, id)`: the tenant's key and the pair a posting names). For tests and
 * the fault bench: it reads the whole index.
 */
export async function checkPrincipalPostings(sql: SQL, schema: string): Promise<PostingsCheck> {
  const events = qualifiedTable(schema, "events");
  const [row] = await sql.unsafe(
    `SELECT (SELECT count(*) FROM ${events})::bigint AS events, count(e.id)::bigint AS posted,
            (count(*) - count(e.id))::bigint AS strays
     FROM ${qualifiedTable(schema, "principalEvents")} p
     LEFT JOIN ${qualifiedTable(schema, "tenants")} t ON t.tenant_id = p.tenant_id
     CROSS JOIN LATERAL unnest(p.times, p.ids) AS u(time, id)
     LEFT JOIN ${events} e ON e.tenant_key = t.tenant_key AND e.time = u.time AND e.id = u.id
       AND e.principal_id = p.principal_id AND date_bin('1 minute', e.time, '${BIN_ORIGIN}') = p.minute`,
  );
  const counts = row as { events: string | number; posted: string | number; strays: string | number };
  return { events: Number(counts.events), posted: Number(counts.posted), strays: Number(counts.strays) };
}
