import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type PrivateStack, preparePrivateStack } from "./private-stack.ts";

const CLI = join(import.meta.dir, "../../ops/stack/src/cli.ts");

/**
 * Servers of the test's own (a private stack with only `services` and what they need), so the test may stop, start
 * or freeze them without touching the stack every other test uses. Driven through the stack CLI with the private
 * stack's state directory and ports.
 */
export interface PrivateServers {
  /** The private stack's `SVC_STACK_*` addresses (its `stack.env`). */
  env: Record<string, string>;
  /** The stack's state directory (pid files in `pids/`, kubeconfig in `kube/`). */
  stateDir: string;
  /** The pid of one of its servers, from its pid file. */
  pidOf(service: string): number;
  /** Stops every server, keeping their data. */
  stop(): Promise<void>;
  /** Starts them again on the same ports with the same data. */
  start(): Promise<void>;
  /** Stops them and deletes their state and data. */
  remove(): Promise<void>;
}

async function runCli(stack: PrivateStack, args: string[]): Promise<void> {
  const child = Bun.spawn([process.execPath, "run", CLI, ...args], {
    env: { ...process.env, ...stack.overrides },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`stack ${args.join(" ")} exited ${code}: ${out}\n${err}`);
}

function readEnvFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/** Starts `services` in a private stack (call inside `describeWithServers`); removes it again if the start fails. */
export async function startPrivateServers(services: readonly string[]): Promise<PrivateServers> {
  const stack = await preparePrivateStack();
  const stateDir = stack.ctx.stateDir;
  try {
    await runCli(stack, ["up", ...services]);
  } catch (error) {
    await stack.remove();
    throw error;
  }
  return {
    env: readEnvFile(join(stateDir, "stack.env")),
    stateDir,
    pidOf(service) {
      const record = readFileSync(join(stateDir, "pids", `${service}.pid`), "utf8");
      const pid = Number(record.split("\n")[0]);
      if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in the pid file of ${service}: ${record}`);
      return pid;
    },
    stop: () => runCli(stack, ["down"]),
    start: () => runCli(stack, ["up", ...services]),
    remove: () => stack.remove(),
  };
}
