import type { SQL, TransactionSQL } from "bun";
import { RuntimeError } from "./errors.ts";
import { tableOf } from "./model-tables.ts";

export interface TermFenceOptions {
  sql: SQL;
  schema: string;
  component: string;
  /**
   * A fenced transaction whose client stalls (a SIGSTOPped leader) is ended by the database after this long
   * (`idle_in_transaction_session_timeout`), so its row lock cannot hold a successor's claim for ever. The renew
   * deadline fits: the stalled leader has lost its leadership by then.
   */
  stallTimeoutMs: number;
}

const fenced = (component: string, term: number, message: string) =>
  new RuntimeError("COMPONENT_FENCED", `${component} term ${term}: ${message}`, { subject: component });

/**
 * Term fencing (docs/components.md): every leader-only write runs in a transaction that first updates the
 * component's `leader_terms` row on the condition `term = <my term>`. A new leader's `claim` raises the term; it
 * waits for an old term's open transaction (both lock the row) and every later old-term write finds 0 rows and
 * is refused with `COMPONENT_FENCED`. So a deposed leader can never overwrite its successor's state.
 */
export class TermFence {
  private readonly table: string;

  constructor(private readonly options: TermFenceOptions) {
    this.table = tableOf(options.schema, "leader_terms");
  }

  /** Takes office with `term`; refused when the stored term is higher (or equal under another holder). */
  async claim(term: number, holder: string): Promise<void> {
    const { sql, component } = this.options;
    const rows = await sql.begin(async (tx) => {
      // The claim may wait for a stalled old-term transaction, which the database ends after stallTimeoutMs.
      await this.bound(tx, 3);
      return tx.unsafe(
        `INSERT INTO ${this.table} AS f (component, term, holder) VALUES ($1, $2, $3)
         ON CONFLICT (component) DO UPDATE SET term = EXCLUDED.term, holder = EXCLUDED.holder, since = now()
         WHERE f.term < EXCLUDED.term OR (f.term = EXCLUDED.term AND f.holder = EXCLUDED.holder)
         RETURNING term`,
        [component, term, holder],
      );
    });
    if (rows.length === 0) throw fenced(component, term, "a newer term already holds office");
  }

  /** Runs `work` in one transaction that commits only while `term` is still the component's current term. */
  async write<T>(term: number, work: (tx: TransactionSQL) => Promise<T>): Promise<T> {
    const { sql, component } = this.options;
    return sql.begin(async (tx) => {
      await this.bound(tx);
      const rows = await tx.unsafe(
        `UPDATE ${this.table} SET writes = writes + 1 WHERE component = $1 AND term = $2 RETURNING term`,
        [component, term],
      );
      if (rows.length === 0) throw fenced(component, term, "write refused: no longer the current term");
      return work(tx);
    });
  }

  /** The term currently in office (undefined before the first claim). */
  async current(): Promise<{ term: number; holder: string } | undefined> {
    const rows: { term: string | number; holder: string }[] = await this.options.sql.unsafe(
      `SELECT term, holder FROM ${this.table} WHERE component = $1`,
      [this.options.component],
    );
    const row = rows[0];
    return row ? { term: Number(row.term), holder: row.holder } : undefined;
  }

  private async bound(tx: TransactionSQL, statementFactor = 1): Promise<void> {
    const ms = Math.max(1, Math.round(this.options.stallTimeoutMs));
    await tx.unsafe(`SET LOCAL idle_in_transaction_session_timeout = ${ms}`);
    await tx.unsafe(`SET LOCAL statement_timeout = ${ms * statementFactor}`);
  }
}
