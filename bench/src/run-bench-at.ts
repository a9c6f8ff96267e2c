import { join } from "node:path";

/**
 * Runs a bench that lives with the module it measures (`path` from the repository's root, where that module's
 * dependencies are) with `args`, this process's stdio, and exits with its exit code: the bench commands stay
 * together under bench/.
 */
export async function runBenchAt(path: string, args: string[] = process.argv.slice(2)): Promise<never> {
  const child = Bun.spawn([process.execPath, "run", join(import.meta.dir, "../..", path), ...args], {
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  });
  process.exit(await child.exited);
}
