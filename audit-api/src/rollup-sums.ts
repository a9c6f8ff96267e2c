import { ExpiringLru } from "@svc/common";

/** A rollup sum and the index state it was read under (`IndexReader`'s fingerprint: max object id and the marks). */
export interface RollupSum {
  readonly fingerprint: string;
  readonly n: number;
}

/** Sums kept (a key is tenant, filters and whole-minute range: ~100 bytes each). */
const SUMS_KEPT = 20_000;
/** Not needed for exactness (the fingerprint is): it only lets sums nobody asks for go. */
const SUM_TTL_MS = 3_600_000;

/**
 * The rollup part of recent counts (`counts_hour` and `counts` over a count's whole minutes), each with the
 * fingerprint of the index it was read under. A count statement reads the fingerprint again in its own snapshot and
 * uses the kept sum only when it is the same — so a newly indexed batch (which inserts an `objects` row and raises
 * its partition's mark in the same transaction as its `counts` rows) makes every kept sum miss at once, and the
 * statement sums the rollup again (docs/audit-storage.md, "Exact counts").
 */
export class RollupSums {
  private readonly sums = new ExpiringLru<RollupSum>({ maxEntries: SUMS_KEPT, ttlMs: SUM_TTL_MS });

  get(key: string): RollupSum | undefined {
    return this.sums.get(key);
  }

  set(key: string, sum: RollupSum): void {
    this.sums.set(key, sum);
  }
}
