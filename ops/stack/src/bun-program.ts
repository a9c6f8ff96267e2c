import { join } from "node:path";
import type { EnvFilter } from "./server-env.ts";

/** The repository's root: the stack's own programs (the KMS, the agent, the queue-consumer) run from its sources. */
export const REPO_ROOT = join(import.meta.dir, "..", "..", "..");

/** `bun <repo>/<entry>`: the Bun that runs the stack runner runs the program too (no `bun run` wrapper process). */
export function bunProgram(entry: string): { command: string; args: string[]; cwd: string } {
  return { command: process.execPath, args: [join(REPO_ROOT, entry)], cwd: REPO_ROOT };
}

/** Inherited variables with one of `prefixes` are left out: a program of the stack takes its settings from the stack. */
export const dropPrefixes =
  (...prefixes: string[]): EnvFilter =>
  (key) =>
    prefixes.some((prefix) => key.startsWith(prefix));

/** `GET url` answers 200 within the probe timeout (with `ca` trusted when given). */
export async function answers200(url: string, timeoutMs: number, ca?: string): Promise<boolean> {
  const response = await fetch(url, {
    signal: AbortSignal.timeout(timeoutMs),
    ...(ca === undefined ? {} : { tls: { ca } }),
  }).catch(() => undefined);
  await response?.body?.cancel().catch(() => {});
  return response?.status === 200;
}
