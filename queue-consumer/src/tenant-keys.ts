import type { SQL } from "bun";
import { QueueConsumerError } from "./errors.ts";
import { qualifiedTable } from "./index-schema.ts";
import { textArrayLiteral } from "./pg-array-literal.ts";

/**
 * The integer keys of `tenants` (tenant ids, any number of times each), adding the tenants not keyed yet, in one
 * statement (docs/audit-storage.md, "Tenant keys"). The usual batch finds all of its tenants and writes nothing. A
 * tenant that another writer adds at the same moment is in neither snapshot's `found`; the insert then meets its
 * row (`ON CONFLICT`, which waits for that writer's commit) and `DO UPDATE` returns it, so every tenant asked for
 * has its key in the answer. New tenants are taken in order, so two writers adding the same ones do not deadlock.
 *
 * Run on its own connection before the batch's transaction (`sql`, autocommitted): a new tenant's row is locked
 * only for this statement. Keys are never cached: a key is read in the same second as the rows that carry it.
 */
export async function tenantKeys(sql: SQL, schema: string, tenants: readonly string[]): Promise<Map<string, number>> {
  const keys = new Map<string, number>();
  if (tenants.length === 0) return keys;
  const table = qualifiedTable(schema, "tenants");
  const wanted = textArrayLiteral([...new Set(tenants)], true);
  const rows = (await sql.unsafe(
    `WITH wanted AS (SELECT DISTINCT w COLLATE "C" AS tenant_id FROM unnest($1::text[]) AS u(w)),
     found AS (SELECT t.tenant_key, t.tenant_id FROM ${table} t JOIN wanted USING (tenant_id)),
     added AS (
       INSERT INTO ${table} (tenant_id)
       SELECT tenant_id FROM wanted WHERE tenant_id NOT IN (SELECT tenant_id FROM found) ORDER BY tenant_id
       ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = excluded.tenant_id
       RETURNING tenant_key, tenant_id
     )
     SELECT tenant_key, tenant_id FROM found UNION ALL SELECT tenant_key, tenant_id FROM added`,
    [wanted],
  )) as { tenant_key: number; tenant_id: string }[];
  for (const row of rows) keys.set(row.tenant_id, row.tenant_key);
  return keys;
}

/**
 * The key of `tenant` in `keys` (the answer of `tenantKeys` for a batch's tenants). Throws
 * `QUEUE_CONSUMER_TENANT_KEY_MISSING`, not retriable: the same keys would be missing again.
 */
export function tenantKeyOf(keys: ReadonlyMap<string, number>, tenant: string): number {
  const key = keys.get(tenant);
  if (key === undefined)
    throw new QueueConsumerError("QUEUE_CONSUMER_TENANT_KEY_MISSING", `no key for tenant ${JSON.stringify(tenant)}`, {
      subject: tenant,
      canRetry: false,
    });
  return key;
}
