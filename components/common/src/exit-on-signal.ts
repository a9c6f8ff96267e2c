import { constants } from "node:os";

/**
 * The signals that end a run early: a CI job cancelled or timed out (SIGTERM), Ctrl-C (SIGINT), a closed terminal
 * (SIGHUP). Bun runs no `process.on("exit")` handler for them: what a run started outside itself (servers, topics,
 * schemas, temporary files) stays unless a handler of its own removes it.
 */
export const TERMINATING_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
export type TerminatingSignal = (typeof TERMINATING_SIGNALS)[number];

export interface SignalExit {
  /** What a signal does: `cleanup`, then exit 128 + the signal's number. A second signal joins the same run. */
  handle(signal: TerminatingSignal): Promise<void>;
  /** Takes the handlers away again (the run ended and cleaned up by itself). */
  remove(): void;
}

/**
 * Installs SIGTERM, SIGINT and SIGHUP handlers that run `cleanup` once and then exit 128 + the signal's number, also
 * when `cleanup` fails (it should log what it could not remove; the failure is not thrown again).
 */
export function exitAfterCleanup(
  cleanup: (signal: TerminatingSignal) => Promise<void>,
  options: { exit?: (code: number) => void } = {},
): SignalExit {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;
  const run = async (signal: TerminatingSignal) => {
    await cleanup(signal).catch(() => undefined);
    exit(128 + constants.signals[signal]);
  };
  const handle = (signal: TerminatingSignal) => {
    running ??= run(signal);
    return running;
  };
  const listeners = TERMINATING_SIGNALS.map((signal) => [signal, () => void handle(signal)] as const);
  for (const [signal, listener] of listeners) process.on(signal, listener);
  return {
    handle,
    remove() {
      for (const [signal, listener] of listeners) process.off(signal, listener);
    },
  };
}
