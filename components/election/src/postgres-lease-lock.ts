import { SQL } from "bun";
import { ElectionError } from "./errors.ts";
import type { LeaseAttempt, LeaseLock } from "./lease-lock.ts";
import { withRequestTimeout } from "./request-timeout.ts";

export interface PostgresLeaseLockOptions {
  url: string;
  /** The row's key: one row per elected component. */
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** Default `svc_election_leases`. */
  table?: string;
}

const TABLE_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

interface LeaseRow {
  holder: string | null;
  epoch: string | number;
  expires_in_ms: string | number | null;
}

/**
 * One lease row per name (`orchestrator` outside a cluster). Expiry is decided by the database's clock only:
 * the conditional UPDATE takes the row when it is free, already ours, or `renew_time + lease_seconds < now()`.
 * No local clock is compared with anything. Term = the row's `epoch`, raised on every new leadership.
 */
export class PostgresLeaseLock implements LeaseLock {
  readonly description: string;
  private readonly sql: SQL;
  private readonly table: string;
  private epoch: number | undefined;

  constructor(private readonly options: PostgresLeaseLockOptions) {
    this.table = options.table ?? "svc_election_leases";
    if (!TABLE_PATTERN.test(this.table)) {
      throw new ElectionError("ELECTION_CONFIG_INVALID", "table", `not a plain table name: ${this.table}`);
    }
    this.description = `lease row ${this.table}/${options.name}`;
    this.sql = new SQL({ url: options.url, max: 1, idleTimeout: 30, connectionTimeout: 5 });
  }

  private run<T>(timeoutMs: number, query: () => Promise<T>): Promise<T> {
    return withRequestTimeout(this.description, timeoutMs, () => query());
  }

  async prepare(timeoutMs: number): Promise<void> {
    const ddl = `CREATE TABLE IF NOT EXISTS ${this.table} (
      name text PRIMARY KEY,
      holder text,
      epoch bigint NOT NULL,
      lease_seconds double precision NOT NULL,
      acquire_time timestamptz NOT NULL,
      renew_time timestamptz NOT NULL
    )`;
    try {
      await this.run(timeoutMs, () => this.sql.unsafe(ddl));
    } catch (error) {
      // Two replicas creating the table at once: the one that loses the race gets a unique violation on the
      // catalog (23505), "relation already exists" (42P07) or "type already exists" (42710, the table's row type).
      const code = (error as { errno?: string; code?: string }).errno ?? (error as { code?: string }).code;
      if (code !== "23505" && code !== "42P07" && code !== "42710") throw error;
    }
  }

  async tryAcquireOrRenew(leading: boolean, timeoutMs: number): Promise<LeaseAttempt> {
    const { name, identity, leaseDurationSeconds } = this.options;
    const t = this.table;
    const renewing = leading;
    const taken = await this.run(timeoutMs, async () => {
      const rows: { epoch: string | number }[] = await this.sql.unsafe(
        `INSERT INTO ${t} AS l (name, holder, epoch, lease_seconds, acquire_time, renew_time)
         VALUES ($1, $2, 1, $3, now(), now())
         ON CONFLICT (name) DO UPDATE SET
           holder = EXCLUDED.holder,
           lease_seconds = EXCLUDED.lease_seconds,
           renew_time = now(),
           epoch = CASE WHEN l.holder = EXCLUDED.holder AND $4 AND l.epoch = $5 THEN l.epoch ELSE l.epoch + 1 END,
           acquire_time = CASE WHEN l.holder = EXCLUDED.holder AND $4 AND l.epoch = $5 THEN l.acquire_time ELSE now() END
         WHERE (l.holder = EXCLUDED.holder AND $4 AND l.epoch = $5)
            OR (NOT $4 AND (l.holder IS NULL OR l.holder = EXCLUDED.holder
                OR l.renew_time + make_interval(secs => l.lease_seconds) < now()))
         RETURNING l.epoch`,
        [name, identity, leaseDurationSeconds, renewing, this.epoch ?? -1],
      );
      return rows[0];
    });
    if (taken) {
      this.epoch = Number(taken.epoch);
      return { leader: true, holder: identity, term: this.epoch };
    }
    const [row] = await this.run(timeoutMs, async () => {
      const rows: LeaseRow[] = await this.sql.unsafe(
        `SELECT holder, epoch,
                extract(epoch FROM (renew_time + make_interval(secs => lease_seconds) - now())) * 1000 AS expires_in_ms
           FROM ${t} WHERE name = $1`,
        [name],
      );
      return rows;
    });
    return {
      leader: false,
      holder: row?.holder ?? undefined,
      term: row ? Number(row.epoch) : undefined,
      expiresInMs: row?.expires_in_ms == null ? undefined : Number(row.expires_in_ms),
    };
  }

  /**
   * LISTEN on the table's channel (Bun's `sql.listen`: one dedicated connection, re-subscribed after a drop);
   * a release NOTIFYs it with the row's name. Rejects when the LISTEN cannot be set up (the loop then polls).
   */
  async watch(changed: (holder: string | undefined) => void, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const subscription = await this.run(this.options.leaseDurationSeconds * 1000, () =>
      this.sql.listen(this.table, (payload) => {
        if (payload === this.options.name) changed(undefined);
      }),
    );
    try {
      if (!signal.aborted) {
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      }
    } finally {
      await subscription.unlisten();
    }
  }

  async release(timeoutMs: number): Promise<void> {
    if (this.epoch === undefined) return;
    const epoch = this.epoch;
    try {
      // The NOTIFY is sent on commit, only when the row was still ours.
      await this.run(timeoutMs, () =>
        this.sql.unsafe(
          `WITH released AS (
             UPDATE ${this.table} SET holder = NULL WHERE name = $1 AND holder = $2 AND epoch = $3 RETURNING name
           )
           SELECT pg_notify($4, name) FROM released`,
          [this.options.name, this.options.identity, epoch, this.table],
        ),
      );
    } catch (error) {
      throw new ElectionError("ELECTION_LOCK_FAILED", this.description, "release failed", { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 1 });
  }
}
