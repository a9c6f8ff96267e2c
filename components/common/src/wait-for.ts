export interface WaitOptions {
  /** Give up after this many milliseconds. */
  timeoutMs: number;
  /** Time between two polls. */
  intervalMs?: number;
  /** Checked before each poll: a dead process ends the wait at once with its own error. */
  abort?: () => Error | undefined;
}

/** Polls `probe` until it returns a value other than undefined; rethrows the last probe error on timeout. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 250;
  let last: unknown;
  for (;;) {
    const aborted = options.abort?.();
    if (aborted) throw aborted;
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const reason = last instanceof Error ? `: ${last.message}` : "";
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}${reason}`, { cause: last });
    }
    await Bun.sleep(interval);
  }
}
