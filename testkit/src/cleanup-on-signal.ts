import { rmSync } from "node:fs";
import { constants } from "node:os";
import { down, killAllNow, type StackContext } from "@svc/stack";

/**
 * The signals that end a test run early: a CI job cancelled or timed out (SIGTERM), Ctrl-C (SIGINT), a closed
 * terminal (SIGHUP). Bun runs no `process.on("exit")` handler for them, so without handlers of their own the
 * private stack's servers would keep running and its data would stay on disk.
 */
export const CLEANUP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
export type CleanupSignal = (typeof CLEANUP_SIGNALS)[number];

export interface SignalCleanupOptions {
  /** Deletes what is left once the servers are killed; default `down(ctx, { purge: true })` (data kept outside
   * the state directory too, e.g. PostgreSQL's as root). */
  purge?: (ctx: StackContext) => Promise<unknown>;
  /** The longest wait for `purge`: a CI runner kills the job a few seconds after its signal. */
  purgeTimeoutMs?: number;
  exit?: (code: number) => void;
  log?: (line: string) => void;
}

export interface SignalCleanup {
  /** What a signal does: kill the servers at once, purge, delete the state directory, exit 128 + signal number.
   * A second signal while it runs gets the same run. */
  handle(signal: CleanupSignal): Promise<void>;
  /** Takes the signal handlers away again (once the stack is stopped normally). */
  remove(): void;
}

export const PURGE_TIMEOUT_MS = 5_000;

/** Installs SIGTERM, SIGINT and SIGHUP handlers that kill and delete the stack of `ctx`, then exit. */
export function cleanupOnSignal(ctx: StackContext, options: SignalCleanupOptions = {}): SignalCleanup {
  const purge = options.purge ?? ((c: StackContext) => down(c, { purge: true }));
  const timeoutMs = options.purgeTimeoutMs ?? PURGE_TIMEOUT_MS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let running: Promise<void> | undefined;

  const run = async (signal: CleanupSignal) => {
    log(`${signal}: killing the private test stack and deleting ${ctx.stateDir}`);
    killAllNow(ctx.stateDir);
    try {
      await withTimeout(purge(ctx), timeoutMs);
    } catch (error) {
      log(`${signal}: purging the private test stack failed: ${error instanceof Error ? error.message : error}`);
    }
    rmSync(ctx.stateDir, { recursive: true, force: true });
    exit(128 + constants.signals[signal]);
  };
  const handle = (signal: CleanupSignal) => {
    running ??= run(signal);
    return running;
  };
  const listeners = CLEANUP_SIGNALS.map((signal) => [signal, () => void handle(signal)] as const);
  for (const [signal, listener] of listeners) process.on(signal, listener);
  return {
    handle,
    remove() {
      for (const [signal, listener] of listeners) process.off(signal, listener);
    },
  };
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
