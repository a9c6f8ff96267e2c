import type { ReplicaProcess } from "@svc/component-runtime/testing";
import type { fullStack, HaComponent } from "../test/support/full-stack.ts";

type Stack = Awaited<ReturnType<typeof fullStack>>;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What one replica says of itself: its `/health/whoami`, or how it is gone. */
async function replicaState(replica: ReplicaProcess | undefined): Promise<unknown> {
  if (!replica) return "not started";
  if (replica.exitCode !== null) {
    const last = replica.lines.filter((l) => (l.level ?? 30) >= 40).slice(-3);
    return { exited: replica.exitCode, lastWarnings: last.map((l) => `${l.msg}: ${String(l.err ?? "")}`) };
  }
  try {
    const { body } = await replica.health("/health/whoami");
    return { role: body.role, term: body.term, holder: body.holder };
  } catch (error) {
    return { unreachable: messageOf(error) };
  }
}

/**
 * The component states of the deployment at one moment, for a failover that did not recover: per HA component its
 * Lease holder, the Pods carrying its leader label and each replica's own view; and from the model's tables the
 * terms in office, the compute nodes and every shard's assignment. Each part that cannot be read says why.
 */
export async function componentStates(stack: Stack, components: readonly HaComponent[]): Promise<unknown> {
  const read = async <T>(work: () => Promise<T>) => work().catch((error: unknown) => `unreadable: ${messageOf(error)}`);
  const perComponent: Record<string, unknown> = {};
  for (const component of components) {
    perComponent[component] = {
      leaseHolder: await read(() => stack.holder(component)),
      labelled: await read(() => stack.labelled(component)),
      replicas: Object.fromEntries(
        await Promise.all(
          stack.pods(component).map(async (pod) => [pod, await replicaState(stack.live.get(pod))] as const),
        ),
      ),
    };
  }
  const table = (sql: string) => read(() => stack.sql.unsafe(sql) as Promise<unknown[]>);
  return {
    components: perComponent,
    leaderTerms: await table(`SELECT component, term, holder FROM ${stack.schema}.leader_terms ORDER BY component`),
    computeNodes: await table(
      `SELECT node_id, state, registered_term, last_heartbeat, changed_at FROM ${stack.schema}.compute_nodes ORDER BY node_id`,
    ),
    shards: await table(
      `SELECT shard_id, assigned_node, assigned_term, loaded_node FROM ${stack.schema}.shards ORDER BY shard_id`,
    ),
  };
}
