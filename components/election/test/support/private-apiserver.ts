import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type PrivateStack, preparePrivateStack } from "@svc/testkit";

const CLI = join(import.meta.dir, "../../../../ops/stack/src/cli.ts");

/** A kube-apiserver (and its etcd) of the test's own, so the test may freeze it with SIGSTOP. */
export interface PrivateApiserver {
  kubeconfig: string;
  /** The kube-apiserver's pid (for SIGSTOP / SIGCONT). */
  pid: number;
  remove(): Promise<void>;
}

async function run(stack: PrivateStack, args: string[]): Promise<void> {
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

export async function startPrivateApiserver(): Promise<PrivateApiserver> {
  const stack = await preparePrivateStack();
  try {
    await run(stack, ["up", "kube-apiserver"]);
  } catch (error) {
    await stack.remove();
    throw error;
  }
  // The pid file holds the pid, then its start time.
  const pidFile = readFileSync(join(stack.ctx.stateDir, "pids", "kube-apiserver.pid"), "utf8");
  const pid = Number(pidFile.split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${pidFile}`);
  return {
    kubeconfig: join(stack.ctx.stateDir, "kube", "kubeconfig"),
    pid,
    async remove() {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // already gone
      }
      await stack.remove();
    },
  };
}
