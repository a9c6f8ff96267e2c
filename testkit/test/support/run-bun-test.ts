import { join } from "node:path";
import { runCommand } from "@svc/common";

const repoRoot = join(import.meta.dir, "..", "..", "..");

export interface BunTestRun {
  exitCode: number;
  /** stdout and stderr together (bun test reports on stderr). */
  output: string;
}

/**
 * Runs `bun test --timeout 60000 <files>` (paths from the repository root) in a child process with
 * SVC_TEST_NO_STACK=1 and no SVC_STACK_* variables, so the child never starts or uses a stack; `env` adds to it.
 */
export async function runBunTestWithoutServers(
  files: readonly string[],
  env: Record<string, string> = {},
): Promise<BunTestRun> {
  const inherited = Object.entries(process.env).filter(([key]) => !key.startsWith("SVC_STACK_"));
  const run = await runCommand(["bun", "test", "--timeout", "60000", ...files], {
    cwd: repoRoot,
    env: { ...Object.fromEntries(inherited), SVC_TEST_NO_STACK: "1", ...env },
  });
  return { exitCode: run.code, output: `${run.stdout}${run.stderr}` };
}
