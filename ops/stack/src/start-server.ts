import type { StackContext, StackService } from "./context.ts";
import { type DaemonSpec, type RunningDaemon, spawnDaemon } from "./daemon.ts";
import { assertPortsFree } from "./port-check.ts";
import { type EnvFilter, serverEnv } from "./server-env.ts";
import { awaitReady } from "./server-readiness.ts";
import { logFileOf, pidFileOf } from "./state-files.ts";

/** One readiness probe may take this long: a server that accepts but never answers must not stall `up`. */
export const PROBE_TIMEOUT_MS = 2_000;

/** What a service runs: command, arguments, its own variables, and which inherited ones it must not see. */
export type ServerSpec = Omit<DaemonSpec, "name" | "logFile" | "pidFile" | "env"> & {
  env?: Record<string, string>;
  /** Inherited variables (from `ctx.env`) to leave out of the server's environment. */
  dropEnv?: EnvFilter;
};

/**
 * Spawns a service's server (log and pid file in the state directory) once each of its ports is free, and waits
 * until its probe passes on a port held by that very process; a server that dies meanwhile ends the wait at once
 * with its last log lines.
 */
export async function startServer(ctx: StackContext, service: StackService, spec: ServerSpec): Promise<RunningDaemon> {
  await assertPortsFree(service.name, service.ports(ctx));
  const { env, dropEnv, ...command } = spec;
  const daemon = spawnDaemon({
    ...command,
    env: serverEnv(ctx.env, env, dropEnv),
    name: service.name,
    logFile: logFileOf(ctx, service.name),
    pidFile: pidFileOf(ctx, service.name),
  });
  await awaitReady(ctx, service, daemon.pid, daemon.exitError);
  // The process may have exited right after its last answer.
  const exited = daemon.exitError();
  if (exited) throw exited;
  return daemon;
}
