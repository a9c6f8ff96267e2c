import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { tryPidLock } from "./up-lock.ts";

export const installLockPath = (cacheDir: string, name: string) => join(cacheDir, "locks", `install-${name}.lock`);

/**
 * Runs one server's install while holding its lock in the shared cache, so that two `up`s on other state dirs (the
 * developer's stack and a test run's private one) never build into the same files at once: the second waits for
 * the first (polling, so a holder that dies is taken over) and then finds the artifact installed.
 */
export async function withInstallLock<T>(
  cacheDir: string,
  name: string,
  install: () => Promise<T>,
  options: { pollMs?: number; onWait?: (holderPid: number) => void } = {},
): Promise<T> {
  const file = installLockPath(cacheDir, name);
  mkdirSync(join(cacheDir, "locks"), { recursive: true });
  let reported: number | undefined;
  for (;;) {
    const attempt = tryPidLock(file);
    if ("release" in attempt) {
      try {
        return await install();
      } finally {
        attempt.release();
      }
    }
    if (reported !== attempt.holderPid) {
      reported = attempt.holderPid;
      options.onWait?.(attempt.holderPid);
    }
    await Bun.sleep(options.pollMs ?? 1_000);
  }
}
