import { waitFor } from "@svc/common";
import { answers200 } from "../bun-program.ts";
import type { StackContext } from "../context.ts";
import { StackError } from "../errors.ts";
import { PROBE_TIMEOUT_MS } from "../start-server.ts";
import { labelledPods, leaseHolder } from "./component-pods.ts";
import { replicaNames, replicaPorts, type ServiceComponent } from "./component-ports.ts";

/** A replica's `/health/whoami` (spec: Health endpoints), as far as `status` needs it. */
export interface ReplicaRole {
  role: "leader" | "follower" | "active";
  holder: string | undefined;
  term: number | undefined;
}

/** `path` on the health port of replica `index` of `component`. */
export const replicaHealthUrl = (ctx: StackContext, component: ServiceComponent, index: number, path: string) =>
  `http://127.0.0.1:${replicaPorts(ctx.config, component, index).health}${path}`;

/** The replica's role as it reports it; undefined when its health server does not answer. */
export async function replicaRole(
  ctx: StackContext,
  component: ServiceComponent,
  index: number,
): Promise<ReplicaRole | undefined> {
  try {
    const response = await fetch(replicaHealthUrl(ctx, component, index, "/health/whoami"), {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (response.status !== 200) return undefined;
    const body = (await response.json()) as Partial<ReplicaRole>;
    if (body.role !== "leader" && body.role !== "follower" && body.role !== "active") return undefined;
    return { role: body.role, holder: body.holder ?? undefined, term: body.term ?? undefined };
  } catch {
    return undefined;
  }
}

/** `leader (term 3)`, `follower (leader backend-a)`, `active`: the role column of `status`. */
export function describeRole(role: ReplicaRole | undefined): string {
  if (!role) return "no answer on /health/whoami";
  if (role.role === "leader") return role.term === undefined ? "leader" : `leader (term ${role.term})`;
  if (role.role === "follower") return role.holder ? `follower (leader ${role.holder})` : "follower";
  return "active";
}

/** What keeps `component` from the spec's expected state, or undefined once it is there. */
async function expectedStateGap(ctx: StackContext, component: ServiceComponent): Promise<string | undefined> {
  const pods = replicaNames(component);
  const roles = await Promise.all(pods.map((_, index) => replicaRole(ctx, component, index)));
  const seen = pods.map((pod, index) => `${pod}: ${roles[index]?.role ?? "no answer"}`).join(", ");
  if (component === "endpoint") {
    const ready = await Promise.all(
      pods.map((_, index) => answers200(replicaHealthUrl(ctx, component, index, "/health/ready"), PROBE_TIMEOUT_MS)),
    );
    const notReady = pods.filter((_, index) => !ready[index]);
    return notReady.length === 0 ? undefined : `not Ready: ${notReady.join(", ")}`;
  }
  const leaders = pods.filter((_, index) => roles[index]?.role === "leader");
  const followers = pods.filter((_, index) => roles[index]?.role === "follower");
  if (leaders.length !== 1 || followers.length !== 1) return `one leader and one follower expected (${seen})`;
  const [labelled, holder] = await Promise.all([labelledPods(ctx, component), leaseHolder(ctx, component)]);
  if (holder !== leaders[0]) return `the Lease is held by ${holder ?? "no one"}, the leader is ${leaders[0]}`;
  if (labelled.length !== 1 || labelled[0] !== holder) {
    return `the leader label is on [${labelled.join(", ")}], the Lease holder is ${holder}`;
  }
  return undefined;
}

/**
 * Waits for the spec's expected state of `components`: per HA service one leader that holds the Lease and alone
 * carries the leader label, and one follower; every endpoint Ready. Fails with STACK_NOT_READY naming each
 * component still short of it and what was seen.
 */
export async function awaitExpectedState(
  ctx: StackContext,
  components: readonly ServiceComponent[],
  timeoutMs: number,
): Promise<void> {
  let gaps = new Map<ServiceComponent, string>();
  try {
    await waitFor(
      "the components' expected state",
      async () => {
        const found = await Promise.all(components.map(async (c) => [c, await expectedStateGap(ctx, c)] as const));
        gaps = new Map(found.filter((entry): entry is [ServiceComponent, string] => entry[1] !== undefined));
        return gaps.size === 0 ? true : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  } catch (cause) {
    const named = [...gaps].map(([component, gap]) => `${component}: ${gap}`).join("; ");
    throw new StackError(
      "STACK_NOT_READY",
      `the components did not reach the expected state within ${timeoutMs / 1000} s: ${named || String(cause)}`,
      [...gaps.keys()].join(",") || "services",
      { cause },
    );
  }
}
