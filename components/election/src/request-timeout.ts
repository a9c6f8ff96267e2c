import { ElectionError } from "./errors.ts";

/**
 * Runs one request with a timeout: `run` gets a signal to pass on, and the promise rejects with
 * ELECTION_REQUEST_TIMEOUT at the deadline even if the request ignores the signal.
 */
export async function withRequestTimeout<T>(
  what: string,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        controller.abort();
        reject(
          new ElectionError("ELECTION_REQUEST_TIMEOUT", what, `no answer within ${timeoutMs} ms`, { canRetry: true }),
        );
      },
      Math.max(1, timeoutMs),
    );
  });
  try {
    return await Promise.race([run(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
