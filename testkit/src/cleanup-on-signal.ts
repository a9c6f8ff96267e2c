import { rmSync } from "node:fs";
import { exitAfterCleanup, type SignalExit, TERMINATING_SIGNALS, type TerminatingSignal } from "@svc/common";
import { down, killAllNow, type StackContext } from "@svc/stack";

/** The signals the private stack is removed on (`TERMINATING_SIGNALS` of `@svc/common`). */
export const CLEANUP_SIGNALS = TERMINATING_SIGNALS;
export type CleanupSignal = TerminatingSignal;

export interface SignalCleanupOptions {
  /** Deletes what is left once the servers are killed; default `down(ctx, { purge: true })` (data kept outside
   * the state directory too, e.g. PostgreSQL's as root). */
  purge?: (ctx: StackContext) => Promise<unknown>;
  /** The longest wait for `purge`: a CI runner kills the job a few seconds after its signal. */
  purgeTimeoutMs?: number;
  exit?: (code: number) => void;
  log?: (line: string) => void;
}

/** A signal kills the servers at once, purges, deletes the state directory and exits 128 + its number. */
export type SignalCleanup = SignalExit;

export const PURGE_TIMEOUT_MS = 5_000;

/** Installs SIGTERM, SIGINT and SIGHUP handlers that kill and delete the stack of `ctx`, then exit. */
export function cleanupOnSignal(ctx: StackContext, options: SignalCleanupOptions = {}): SignalCleanup {
  const purge = options.purge ?? ((c: StackContext) => down(c, { purge: true }));
  const timeoutMs = options.purgeTimeoutMs ?? PURGE_TIMEOUT_MS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  return exitAfterCleanup(
    async (signal) => {
      log(`${signal}: killing the private test stack and deleting ${ctx.stateDir}`);
      killAllNow(ctx.stateDir);
      try {
        await withTimeout(purge(ctx), timeoutMs);
      } catch (error) {
        log(`${signal}: purging the private test stack failed: ${error instanceof Error ? error.message : error}`);
      }
      rmSync(ctx.stateDir, { recursive: true, force: true });
    },
    { exit: options.exit },
  );
}

async function withTimeout(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
