import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type PrivateStack, preparePrivateStack } from "@svc/testkit";

const cli = join(import.meta.dir, "../../../ops/stack/src/cli.ts");

/**
 * One server of the test's own (a private stack with only that service selected), so the test may stop and start
 * it again: through the stack CLI, with the private stack's state directory and ports (`overrides`).
 */
export interface PrivateServer {
  /** The private stack's `SVC_STACK_*` addresses. */
  env: Record<string, string>;
  /** Stops the server, keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  remove(): Promise<void>;
}

async function run(stack: PrivateStack, args: string[]): Promise<void> {
  const child = Bun.spawn([process.execPath, "run", cli, ...args], {
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

export async function startPrivateServer(service: "kafka" | "minio"): Promise<PrivateServer> {
  const stack = await preparePrivateStack();
  await run(stack, ["up", service]);
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(stack.ctx.stateDir, "stack.env"), "utf8").split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return {
    env,
    stop: () => run(stack, ["down"]),
    start: () => run(stack, ["up", service]),
    remove: () => stack.remove(),
  };
}
