import { type TermFence, tableOf } from "@svc/component-runtime";
import { dutyCounter } from "@svc/component-runtime/metrics";
import type { TransactionSQL } from "bun";

// Counted once their transaction committed (a fenced one is rolled back and counts nothing).
const nodesLost = dutyCounter(
  "svc_orchestrator_nodes_lost_total",
  "Compute nodes marked lost by supervision (no heartbeat within the node timeout)",
);
const shardsAssigned = dutyCounter(
  "svc_orchestrator_shards_assigned_total",
  "Shards given to an up compute node by reconciliation: first placements and the reassignment of a lost or removed node's shards",
);

export interface NodeRegistration {
  nodeId: string;
  address: string;
  podName: string;
  /** 0: no explicit limit. */
  capacity: number;
}

export interface RecoveredState {
  nodesUp: number;
  shards: number;
  assigned: number;
}

export interface TickOutcome {
  /** Nodes marked lost in this tick. */
  lost: string[];
  /** Shards that got a node in this tick. */
  assigned: number;
  /** Shards taken from a node that is no longer up, or of an index no longer ready. */
  unassigned: number;
}

const json = (values: readonly string[]) => JSON.stringify(values);

/**
 * The orchestrator's state in PostgreSQL (docs/components.md: `compute_nodes`, `shards`, `indexes`): every method is
 * one leader-only transaction fenced by `term` (TermFence), so a deposed leader's call is refused, never applied.
 */
export class PlacementStore {
  private readonly nodes: string;
  private readonly shards: string;
  private readonly indexes: string;

  constructor(
    schema: string,
    private readonly fence: TermFence,
  ) {
    this.nodes = tableOf(schema, "compute_nodes");
    this.shards = tableOf(schema, "shards");
    this.indexes = tableOf(schema, "indexes");
  }

  /**
   * `recoverState()`: takes office with `term`, then reads the persisted state. Every `up` node gets a fresh
   * heartbeat: its heartbeats went unanswered while there was no leader, which must not make it lost.
   */
  async recoverState(term: number, holder: string): Promise<RecoveredState> {
    await this.fence.claim(term, holder);
    return this.fence.write(term, async (tx) => {
      await tx.unsafe(`UPDATE ${this.nodes} SET last_heartbeat = now() WHERE state = 'up'`);
      // Placement is reconciled at once, so the first heartbeat a node gets through carries its assignment.
      await this.reconcile(tx, term);
      const [row] = await tx.unsafe(
        `SELECT (SELECT count(*) FROM ${this.nodes} WHERE state = 'up') AS nodes_up,
                count(*) AS shards, count(assigned_node) AS assigned
           FROM ${this.shards}`,
      );
      return { nodesUp: Number(row.nodes_up), shards: Number(row.shards), assigned: Number(row.assigned) };
    });
  }

  /** `AddCompute`: registers (again) as `up`, reconciles, answers the node's assignment. */
  async addCompute(term: number, node: NodeRegistration): Promise<string[]> {
    let placed = 0;
    const assignment = await this.fence.write(term, async (tx) => {
      await tx.unsafe(
        `INSERT INTO ${this.nodes} (node_id, address, pod_name, capacity, state, last_heartbeat, registered_term)
         VALUES ($1, $2, $3, $4, 'up', now(), $5)
         ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address, pod_name = EXCLUDED.pod_name,
           capacity = EXCLUDED.capacity, state = 'up', last_heartbeat = now(),
           registered_term = EXCLUDED.registered_term,
           changed_at = CASE WHEN ${this.nodes}.state = 'up' THEN ${this.nodes}.changed_at ELSE now() END`,
        [node.nodeId, node.address, node.podName, node.capacity, term],
      );
      placed = (await this.reconcile(tx, term)).assigned;
      return this.assignmentOf(tx, node.nodeId);
    });
    shardsAssigned.inc(placed);
    return assignment;
  }

  /**
   * `Heartbeat`: records that the node is alive and which of its assigned shards it holds; answers its assignment,
   * or `registered: false` when the node is not `up` (lost, removed, unknown).
   */
  async heartbeat(
    term: number,
    nodeId: string,
    loaded: readonly string[],
  ): Promise<{ registered: boolean; assigned: string[] }> {
    return this.fence.write(term, async (tx) => {
      const alive = await tx.unsafe(
        `UPDATE ${this.nodes} SET last_heartbeat = now() WHERE node_id = $1 AND state = 'up' RETURNING node_id`,
        [nodeId],
      );
      if (alive.length === 0) return { registered: false, assigned: [] };
      await tx.unsafe(
        `UPDATE ${this.shards} SET loaded_node = $1, loaded_at = now()
          WHERE assigned_node = $1 AND loaded_node IS DISTINCT FROM $1
            AND shard_id IN (SELECT jsonb_array_elements_text($2::text::jsonb))`,
        [nodeId, json(loaded)],
      );
      await tx.unsafe(
        `UPDATE ${this.shards} SET loaded_node = NULL, loaded_at = NULL
          WHERE loaded_node = $1 AND shard_id NOT IN (SELECT jsonb_array_elements_text($2::text::jsonb))`,
        [nodeId, json(loaded)],
      );
      return { registered: true, assigned: await this.assignmentOf(tx, nodeId) };
    });
  }

  /** `RemoveCompute`: the node is `removed`; its shards go to the others. Answers the shards it released. */
  async removeCompute(term: number, nodeId: string): Promise<{ removed: boolean; released: string[] }> {
    let placed = 0;
    const outcome = await this.fence.write(term, async (tx) => {
      const rows = await tx.unsafe(
        `UPDATE ${this.nodes} SET state = 'removed', changed_at = now()
          WHERE node_id = $1 AND state <> 'removed' RETURNING node_id`,
        [nodeId],
      );
      const released = await this.assignmentOf(tx, nodeId);
      placed = (await this.reconcile(tx, term)).assigned;
      return { removed: rows.length > 0, released };
    });
    shardsAssigned.inc(placed);
    return outcome;
  }

  /** Node supervision and reconciliation, one fenced transaction: silent nodes → lost, then placement. */
  async tick(term: number, nodeTimeoutMs: number): Promise<TickOutcome> {
    const outcome = await this.fence.write(term, async (tx) => {
      const lost = await tx.unsafe(
        `UPDATE ${this.nodes} SET state = 'lost', changed_at = now()
          WHERE state = 'up' AND last_heartbeat < now() - make_interval(secs => $1::double precision / 1000)
          RETURNING node_id`,
        [nodeTimeoutMs],
      );
      const placement = await this.reconcile(tx, term);
      return { lost: lost.map((row: { node_id: string }) => row.node_id), ...placement };
    });
    nodesLost.inc(outcome.lost.length);
    shardsAssigned.inc(outcome.assigned);
    return outcome;
  }

  /**
   * Desired: every shard of a `ready` index on exactly one `up` node within its capacity. Shards on a node that is
   * not up, or of an index that is not ready, are unassigned; unassigned ones go to the up node holding fewest.
   */
  private async reconcile(tx: TransactionSQL, term: number): Promise<{ assigned: number; unassigned: number }> {
    const unassigned = await tx.unsafe(
      `UPDATE ${this.shards} s SET assigned_node = NULL, assigned_term = $1, loaded_node = NULL, loaded_at = NULL
        WHERE assigned_node IS NOT NULL
          AND (NOT EXISTS (SELECT 1 FROM ${this.nodes} n WHERE n.node_id = s.assigned_node AND n.state = 'up')
               OR NOT EXISTS (SELECT 1 FROM ${this.indexes} i WHERE i.name = s.index_name AND i.state = 'ready'))
        RETURNING shard_id`,
      [term],
    );
    const nodes: { node_id: string; capacity: number; held: string | number }[] = await tx.unsafe(
      `SELECT n.node_id, n.capacity, count(s.shard_id) AS held
         FROM ${this.nodes} n LEFT JOIN ${this.shards} s ON s.assigned_node = n.node_id
        WHERE n.state = 'up' GROUP BY n.node_id, n.capacity ORDER BY n.node_id`,
    );
    const load = nodes.map((n) => ({ id: n.node_id, capacity: n.capacity, held: Number(n.held) }));
    const waiting: { shard_id: string }[] = await tx.unsafe(
      `SELECT s.shard_id FROM ${this.shards} s JOIN ${this.indexes} i ON i.name = s.index_name AND i.state = 'ready'
        WHERE s.assigned_node IS NULL ORDER BY s.shard_id FOR UPDATE OF s`,
    );
    let assigned = 0;
    for (const { shard_id } of waiting) {
      const open = load.filter((n) => n.capacity === 0 || n.held < n.capacity);
      if (open.length === 0) break;
      const target = open.reduce((best, n) => (n.held < best.held ? n : best));
      await tx.unsafe(`UPDATE ${this.shards} SET assigned_node = $1, assigned_term = $2 WHERE shard_id = $3`, [
        target.id,
        term,
        shard_id,
      ]);
      target.held += 1;
      assigned += 1;
    }
    return { assigned, unassigned: unassigned.length };
  }

  private async assignmentOf(tx: TransactionSQL, nodeId: string): Promise<string[]> {
    const rows: { shard_id: string }[] = await tx.unsafe(
      `SELECT shard_id FROM ${this.shards} WHERE assigned_node = $1 ORDER BY shard_id`,
      [nodeId],
    );
    return rows.map((row) => row.shard_id);
  }
}
