import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext, down, freePort, killAllNow, loadStackConfig, type StackContext } from "@svc/stack";
import { cleanupOnSignal } from "./cleanup-on-signal.ts";

/** A stack of the test run's own, before or after `up(ctx)`. */
export interface PrivateStack {
  ctx: StackContext;
  /** `SVC_STACK_STATE_DIR` and a free port per `SVC_STACK_*_PORT`: what makes another process's
   * `createContext(env)` (the stack CLI's, say) name this very stack. */
  overrides: Record<string, string>;
  /** Stops the servers, deletes the state directory and the data kept outside it, and removes the handlers. */
  remove(): Promise<void>;
}

/** `SVC_STACK_<SECTION>_<KEY>` of every port of the stack config (`port`, `controller_port`, ...). */
function portVariables(env: Record<string, string | undefined>): string[] {
  const names: string[] = [];
  for (const [section, fields] of Object.entries(loadStackConfig(env))) {
    for (const key of Object.keys(fields)) {
      if (key === "port" || key.endsWith("_port")) names.push(`SVC_STACK_${section}_${key}`.toUpperCase());
    }
  }
  return names;
}

/**
 * Prepares a private stack: a temporary state directory and free loopback ports, so it never meets a developer's
 * stack. From here on it cannot outlive the process: a normal exit kills its servers (synchronously: an `exit`
 * handler cannot wait), and SIGTERM, SIGINT or SIGHUP kill them, delete its data and exit (`cleanupOnSignal`).
 * Start it with `up(stack.ctx)`; the global setup does, and so does the signal test's child process.
 */
export async function preparePrivateStack(
  options: { env?: Record<string, string | undefined>; progress?: StackContext["progress"] } = {},
): Promise<PrivateStack> {
  const base = options.env ?? process.env;
  const stateDir = mkdtempSync(join(tmpdir(), "svc-test-stack-"));
  const overrides: Record<string, string> = { SVC_STACK_STATE_DIR: stateDir };
  for (const name of portVariables(base)) overrides[name] = String(await freePort());
  const ctx = createContext({ ...base, ...overrides }, { stateDir, progress: options.progress });
  const killOnExit = () => killAllNow(stateDir);
  process.on("exit", killOnExit);
  const signals = cleanupOnSignal(ctx);
  return {
    ctx,
    overrides,
    async remove() {
      try {
        await down(ctx, { purge: true });
      } finally {
        rmSync(stateDir, { recursive: true, force: true });
        signals.remove();
        process.off("exit", killOnExit);
      }
    },
  };
}
