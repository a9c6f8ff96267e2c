import { type TermFence, tableOf } from "@svc/component-runtime";
import type { SQL } from "bun";

export type TaskKind = "append" | "cleanup" | "delete_index" | "shaper_job";

export interface Task {
  id: string;
  kind: TaskKind;
  indexName: string;
  payload: Record<string, unknown>;
  state: "queued" | "running" | "done" | "failed";
  attempts: number;
  result: string | null;
}

export interface IndexKeyRecord {
  indexName: string;
  keyId: string;
  material: string;
}

export interface NewShard {
  shardId: string;
  objectKey: string;
  sha256: string;
  sizeBytes: number;
}

interface TaskRow {
  id: string;
  kind: TaskKind;
  index_name: string;
  payload: Record<string, unknown> | string;
  state: Task["state"];
  attempts: number;
  result: string | null;
}

const toTask = (row: TaskRow): Task => ({
  id: row.id,
  kind: row.kind,
  indexName: row.index_name,
  payload: typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload,
  state: row.state,
  attempts: row.attempts,
  result: row.result,
});

/**
 * The backend's state in PostgreSQL (docs/components.md: `indexes`, `shards`, `index_keys`, `task_queue`). Every
 * write is one transaction fenced by the leader's term; reads are plain.
 */
export class TaskStore {
  private readonly tasks: string;
  private readonly indexes: string;
  private readonly shards: string;
  private readonly keys: string;

  constructor(
    private readonly sql: SQL,
    schema: string,
    private readonly fence: TermFence,
  ) {
    this.tasks = tableOf(schema, "task_queue");
    this.indexes = tableOf(schema, "indexes");
    this.shards = tableOf(schema, "shards");
    this.keys = tableOf(schema, "index_keys");
  }

  /** `RecoverTasks()`: takes office, then puts every task left `running` by an earlier term back in the queue. */
  async recoverTasks(term: number, holder: string): Promise<number> {
    await this.fence.claim(term, holder);
    return this.fence.write(term, async (tx) => {
      const rows = await tx.unsafe(
        `UPDATE ${this.tasks} SET state = 'queued', claimed_term = NULL, updated_at = now()
          WHERE state = 'running' AND (claimed_term IS NULL OR claimed_term < $1) RETURNING id`,
        [term],
      );
      return rows.length;
    });
  }

  /** The keys of every ready index (`RecoverVCTCaches()` and the shaper reload read them). */
  async readyKeys(): Promise<IndexKeyRecord[]> {
    const rows: { index_name: string; key_id: string; material: string }[] = await this.sql.unsafe(
      `SELECT k.index_name, k.key_id, k.material FROM ${this.keys} k
         JOIN ${this.indexes} i ON i.name = k.index_name AND i.state = 'ready' ORDER BY k.index_name`,
    );
    return rows.map((r) => ({ indexName: r.index_name, keyId: r.key_id, material: r.material }));
  }

  async createIndex(term: number, name: string, shards: NewShard[], key: IndexKeyRecord): Promise<void> {
    await this.fence.write(term, async (tx) => {
      await tx.unsafe(`INSERT INTO ${this.indexes} (name, shard_count) VALUES ($1, $2)`, [name, shards.length]);
      for (const shard of shards) {
        await tx.unsafe(
          `INSERT INTO ${this.shards} (shard_id, index_name, object_key, sha256, size_bytes) VALUES ($1, $2, $3, $4, $5)`,
          [shard.shardId, name, shard.objectKey, shard.sha256, shard.sizeBytes],
        );
      }
      await tx.unsafe(`INSERT INTO ${this.keys} (index_name, key_id, material) VALUES ($1, $2, $3)`, [
        name,
        key.keyId,
        key.material,
      ]);
    });
  }

  async indexState(name: string): Promise<string | undefined> {
    const rows: { state: string }[] = await this.sql.unsafe(`SELECT state FROM ${this.indexes} WHERE name = $1`, [
      name,
    ]);
    return rows[0]?.state;
  }

  /** Marks a ready index `deleting` and queues its `delete_index` task; undefined when it is not ready. */
  async deleteIndex(term: number, name: string): Promise<string | undefined> {
    return this.fence.write(term, async (tx) => {
      const rows = await tx.unsafe(
        `UPDATE ${this.indexes} SET state = 'deleting' WHERE name = $1 AND state = 'ready' RETURNING name`,
        [name],
      );
      if (rows.length === 0) return undefined;
      const id = Bun.randomUUIDv7();
      await tx.unsafe(`INSERT INTO ${this.tasks} (id, kind, index_name) VALUES ($1, 'delete_index', $2)`, [id, name]);
      return id;
    });
  }

  async enqueue(term: number, kind: TaskKind, indexName: string, payload: Record<string, unknown>): Promise<string> {
    const id = Bun.randomUUIDv7();
    await this.fence.write(term, (tx) =>
      tx.unsafe(`INSERT INTO ${this.tasks} (id, kind, index_name, payload) VALUES ($1, $2, $3, $4::text::jsonb)`, [
        id,
        kind,
        indexName,
        JSON.stringify(payload),
      ]),
    );
    return id;
  }

  /** Claims up to `limit` queued tasks, oldest first, for `term`. */
  async claim(term: number, limit: number): Promise<Task[]> {
    if (limit <= 0) return [];
    return this.fence.write(term, async (tx) => {
      const rows: TaskRow[] = await tx.unsafe(
        `UPDATE ${this.tasks} SET state = 'running', claimed_term = $1, attempts = attempts + 1, updated_at = now()
          WHERE id IN (SELECT id FROM ${this.tasks} WHERE state = 'queued' ORDER BY created_at, id
                        LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING id, kind, index_name, payload, state, attempts, result`,
        [term, limit],
      );
      return rows.map(toTask);
    });
  }

  /** Ends a task this term claimed: `done` with its result. */
  async finish(term: number, id: string, result: string | null): Promise<void> {
    await this.fence.write(term, (tx) =>
      tx.unsafe(
        `UPDATE ${this.tasks} SET state = 'done', result = $3, updated_at = now()
          WHERE id = $1 AND claimed_term = $2 AND state = 'running'`,
        [id, term, result],
      ),
    );
  }

  /** Puts a task this term claimed back in the queue (its shaper went away: it is replayed). */
  async requeue(term: number, id: string): Promise<void> {
    await this.fence.write(term, (tx) =>
      tx.unsafe(
        `UPDATE ${this.tasks} SET state = 'queued', claimed_term = NULL, updated_at = now()
          WHERE id = $1 AND claimed_term = $2 AND state = 'running'`,
        [id, term],
      ),
    );
  }

  /** Index delete scheduling: true when the index has no unfinished job left, so it can go. */
  async deletable(name: string): Promise<boolean> {
    const rows = await this.sql.unsafe(
      `SELECT 1 FROM ${this.tasks} WHERE index_name = $1 AND kind = 'shaper_job' AND state IN ('queued', 'running') LIMIT 1`,
      [name],
    );
    return rows.length === 0;
  }

  async markDeleted(term: number, name: string): Promise<void> {
    await this.fence.write(term, (tx) =>
      tx.unsafe(`UPDATE ${this.indexes} SET state = 'deleted' WHERE name = $1 AND state = 'deleting'`, [name]),
    );
  }

  /** The cleanup worker: finished tasks older than `retentionMs` go (their job results stay). */
  async cleanup(term: number, retentionMs: number): Promise<number> {
    return this.fence.write(term, async (tx) => {
      const rows = await tx.unsafe(
        `DELETE FROM ${this.tasks} WHERE state IN ('done', 'failed')
            AND updated_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING id`,
        [retentionMs],
      );
      return rows.length;
    });
  }

  async task(id: string): Promise<Task | undefined> {
    const rows: TaskRow[] = await this.sql.unsafe(
      `SELECT id, kind, index_name, payload, state, attempts, result FROM ${this.tasks} WHERE id = $1`,
      [id],
    );
    return rows[0] ? toTask(rows[0]) : undefined;
  }

  async listIndexes(): Promise<{ name: string; state: string; shardCount: number; loadedShards: number }[]> {
    const rows: { name: string; state: string; shard_count: number; loaded: string | number }[] = await this.sql.unsafe(
      `SELECT i.name, i.state, i.shard_count, count(s.loaded_node) AS loaded
           FROM ${this.indexes} i LEFT JOIN ${this.shards} s ON s.index_name = i.name
          WHERE i.state <> 'deleted' GROUP BY i.name, i.state, i.shard_count ORDER BY i.name`,
    );
    return rows.map((r) => ({
      name: r.name,
      state: r.state,
      shardCount: r.shard_count,
      loadedShards: Number(r.loaded),
    }));
  }
}
