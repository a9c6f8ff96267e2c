export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cmd` to its exit, collecting stdout and stderr; never throws on a non-zero exit. `stdin`: text written to
 * its standard input (settings that must stay off the command line, such as a token); without it, none.
 */
export async function runCommand(
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string } = {},
): Promise<CommandRun> {
  const child = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}
