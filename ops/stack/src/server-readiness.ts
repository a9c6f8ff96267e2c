import { isAlive, waitFor } from "@svc/common";
import type { StackContext, StackService } from "./context.ts";
import { StackError } from "./errors.ts";
import { describeHolders, portListeners } from "./port-holder.ts";
import { logFileOf } from "./state-files.ts";

/** Our server serves, or another process answers on its port. */
export type Verdict = { ours: true } | { ours: false; holder: string };

/**
 * One look at a server whose process is `pid`: ready when its probe passes AND the probed port (its first) is
 * held by a process of `pid`'s group. Answers from another process on that port (another stack's server, while
 * ours fails to bind) never count as ours. Without /proc the check falls back to `pid` being alive.
 */
export async function readinessOf(ctx: StackContext, service: StackService, pid: number): Promise<Verdict | undefined> {
  if (!(await service.probe(ctx))) return undefined;
  const port = service.ports(ctx)[0];
  const listeners = port === undefined ? undefined : portListeners(port);
  if (listeners === undefined) return isAlive(pid) ? { ours: true } : undefined;
  if (listeners.sockets === 0) return undefined; // the listener closed since the probe: look again
  if (listeners.holders.some((h) => h.pgid === pid) && isAlive(pid)) return { ours: true };
  return { ours: false, holder: `port ${port} answers, but is held by ${describeHolders(listeners)}` };
}

/**
 * Waits until the server of process `pid` is ready and ours (`service.readiness` bounds the wait). `abort` ends the
 * wait at once with its error (a spawned server that exited). Fails with STACK_NOT_READY when time runs out, and
 * with STACK_PORT_IN_USE when another process answers on the server's port.
 */
export async function awaitReady(
  ctx: StackContext,
  service: StackService,
  pid: number,
  abort: () => Error | undefined,
): Promise<void> {
  const { timeoutMs, intervalMs } = service.readiness;
  let verdict: Verdict;
  try {
    verdict = await waitFor(`${service.name} (pid ${pid}) to be ready`, () => readinessOf(ctx, service, pid), {
      timeoutMs,
      intervalMs,
      abort,
    });
  } catch (error) {
    if (error instanceof StackError) throw error;
    throw new StackError(
      "STACK_NOT_READY",
      `${service.name} (pid ${pid}) runs but was not ready within ${timeoutMs / 1000} s; see ${logFileOf(ctx, service.name)}`,
      service.name,
      { cause: error },
    );
  }
  if (!verdict.ours) {
    throw new StackError("STACK_PORT_IN_USE", `${service.name} (pid ${pid}): ${verdict.holder}`, service.name);
  }
}
