/** The fault loop's ledger: which emitted sequence numbers are stored, from the ids the index holds. */
export interface LedgerCheck {
  emitted: number;
  stored: number;
  /** Sequence numbers emitted and not stored (the first few). */
  missing: number[];
  missingCount: number;
}

/** The sequence number at the end of a generated id (`<run>-<time>-<seq, 10 digits>`). */
export function seqOfId(id: string): number | undefined {
  const match = /-(\d{10})$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

/** Checks that every sequence number `0 … emitted − 1` appears among `ids` (ids of other runs are ignored). */
export function checkLedger(emitted: number, ids: Iterable<string>, keep = 20): LedgerCheck {
  const seen = new Uint8Array(emitted);
  let stored = 0;
  for (const id of ids) {
    const seq = seqOfId(id);
    if (seq === undefined || seq >= emitted || seen[seq] === 1) continue;
    seen[seq] = 1;
    stored++;
  }
  const missing: number[] = [];
  let missingCount = 0;
  for (let seq = 0; seq < emitted; seq++) {
    if (seen[seq] === 1) continue;
    missingCount++;
    if (missing.length < keep) missing.push(seq);
  }
  return { emitted, stored, missing, missingCount };
}
