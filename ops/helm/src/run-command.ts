export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` to its exit, collecting stdout and stderr; never throws on a non-zero exit. */
export async function runCommand(
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CommandRun> {
  const child = Bun.spawn(cmd, { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}
