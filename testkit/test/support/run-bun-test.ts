import { join } from "node:path";

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
  const child = Bun.spawn(["bun", "test", "--timeout", "60000", ...files], {
    cwd: repoRoot,
    env: { ...Object.fromEntries(inherited), SVC_TEST_NO_STACK: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { exitCode, output: `${stdout}${stderr}` };
}
