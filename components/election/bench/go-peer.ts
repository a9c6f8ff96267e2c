import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const MODULE_DIR = join(import.meta.dir, "../../../ops/tools/leader-peer");

/**
 * The client-go peer (`ops/tools/leader-peer`), built once per go.mod/go.sum/main.go into the tool cache the stack
 * uses for etcd and kube-apiserver (`~/.cache/svc-ops/bin`, or `$SVC_STACK_CACHE_DIR/bin`), as ops/stack's
 * ensureGoBinary does.
 */
export async function ensureLeaderPeer(log: (line: string) => void): Promise<string> {
  const hash = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "main.go"]) hash.update(readFileSync(join(MODULE_DIR, file)));
  const cache = process.env.SVC_STACK_CACHE_DIR ?? join(homedir(), ".cache", "svc-ops");
  const binDir = join(cache, "bin");
  const target = join(binDir, `leader-peer-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(target)) return target;
  if (!Bun.which("go")) throw new Error("the Go toolchain (go) is needed to build ops/tools/leader-peer");
  mkdirSync(binDir, { recursive: true });
  log(`building ${target} (client-go leader election peer)`);
  const partial = `${target}.partial`;
  const build = Bun.spawn(["go", "build", "-trimpath", "-ldflags=-s -w", "-o", partial, "."], {
    cwd: MODULE_DIR,
    env: { ...process.env, GOFLAGS: "-mod=mod -buildvcs=false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`go build of leader-peer failed (${code}): ${err}`);
  renameSync(partial, target);
  return target;
}
