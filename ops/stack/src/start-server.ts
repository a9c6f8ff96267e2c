import { join } from "node:path";
import { waitFor } from "@svc/common";
import type { StackContext, StackService } from "./context.ts";
import { type DaemonSpec, type RunningDaemon, spawnDaemon } from "./daemon.ts";

/** One readiness probe may take this long: a server that accepts but never answers must not stall `up`. */
export const PROBE_TIMEOUT_MS = 2_000;

export const logFileOf = (ctx: StackContext, name: string) => join(ctx.stateDir, "logs", `${name}.log`);
export const pidFileOf = (ctx: StackContext, name: string) => join(ctx.stateDir, "pids", `${name}.pid`);

/**
 * Spawns a service's server (log and pid file in the state directory) and waits until the service's own probe
 * says it serves; a server that dies meanwhile ends the wait at once with its last log lines.
 */
export async function startServer(
  ctx: StackContext,
  service: StackService,
  spec: Omit<DaemonSpec, "name" | "logFile" | "pidFile" | "env"> & { env?: Record<string, string> },
  wait: { timeoutMs: number; intervalMs?: number },
): Promise<RunningDaemon> {
  const daemon = spawnDaemon({
    ...spec,
    env: { ...ctx.env, ...spec.env },
    name: service.name,
    logFile: logFileOf(ctx, service.name),
    pidFile: pidFileOf(ctx, service.name),
  });
  await waitFor(`${service.name} to be ready`, async () => ((await service.probe(ctx)) ? true : undefined), {
    ...wait,
    abort: daemon.exitError,
  });
  return daemon;
}
