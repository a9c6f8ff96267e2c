import { existsSync } from "node:fs";
import { join } from "node:path";
import { StackError } from "./errors.ts";
import { withInstallLock } from "./install-lock.ts";
import { aptInstall, ensureGoBinary, type GoTool, goBinaryPath } from "./installers.ts";
import { cacheDir } from "./paths.ts";
import { type Progress, silentProgress } from "./progress.ts";

type Env = Record<string, string | undefined>;

const TOOLS_DIR = join(import.meta.dir, "..", "..", "tools");

/**
 * Programs that tests and benches run beside the stack's servers: built or installed the way the servers are, into
 * the same cache (Go modules pinned in ops/tools) or from Debian's packages, under the same per-name install lock.
 */
const GO_TOOLS = {
  /** The audit API's reflection test calls it as the spec shows the call. */
  grpcurl: {
    name: "grpcurl",
    moduleDir: join(TOOLS_DIR, "grpcurl"),
    pkg: "github.com/fullstorydev/grpcurl/cmd/grpcurl",
  },
  /** client-go's own leader election, the peer of bench:failover. */
  "leader-peer": { name: "leader-peer", moduleDir: join(TOOLS_DIR, "leader-peer"), pkg: ".", sources: ["main.go"] },
  /** Helm v3 (ops/helm): the chart's lint, render and server dry-run tests. */
  helm: { name: "helm", moduleDir: join(TOOLS_DIR, "helm"), pkg: "helm.sh/helm/v3/cmd/helm" },
} satisfies Record<string, GoTool>;

const DEBIAN_TOOLS = {
  /** libfaketime: the election test's followers with their wall clock 30 s off. */
  faketime: { command: "faketime", packages: ["faketime"] },
  /** nghttp2's HTTP/2 load generator: bench:kms's cheapest client (a ceiling probe of the KMS, not a gRPC client). */
  h2load: { command: "h2load", packages: ["nghttp2-client"] },
} as const;

export type ToolName = keyof typeof GO_TOOLS | keyof typeof DEBIAN_TOOLS;

export interface ToolOptions {
  env?: Env;
  progress?: Progress;
}

/**
 * Installs Debian packages (root only) under the install lock named after them, so that two test runs, or a test
 * and a bench, never run apt-get at once. Throws `STACK_TOOL_MISSING` when not root.
 */
export async function ensureDebianPackages(packages: string[], options: ToolOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const task = (options.progress ?? silentProgress).task(`install ${packages.join(" ")}`, 1);
  await withInstallLock(cacheDir(env), `apt-${packages.join("-")}`, () => aptInstall(env, task, packages));
  task.done(`installed ${packages.join(", ")}`);
}

/**
 * The path of a tool's program when it is already built or installed, else undefined: nothing is built (for a
 * command line that `up` prints).
 */
export function installedTool(name: ToolName, env: Env = process.env): string | undefined {
  if (name in GO_TOOLS) {
    const path = goBinaryPath(cacheDir(env), GO_TOOLS[name as keyof typeof GO_TOOLS]);
    return existsSync(path) ? path : undefined;
  }
  return Bun.which(DEBIAN_TOOLS[name as keyof typeof DEBIAN_TOOLS].command) ?? undefined;
}

/** The path of a tool's program, built or installed on first use (see GO_TOOLS and DEBIAN_TOOLS). */
export async function ensureTool(name: ToolName, options: ToolOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const progress = options.progress ?? silentProgress;
  if (name in GO_TOOLS) {
    const tool = GO_TOOLS[name as keyof typeof GO_TOOLS];
    const ctx = { cacheDir: cacheDir(env), env };
    const task = progress.task(`install ${tool.name}`, 1);
    return withInstallLock(ctx.cacheDir, tool.name, () => ensureGoBinary(ctx, task, tool));
  }
  const { command, packages } = DEBIAN_TOOLS[name as keyof typeof DEBIAN_TOOLS];
  const found = Bun.which(command);
  if (found) return found;
  await ensureDebianPackages([...packages], options);
  const installed = Bun.which(command);
  if (!installed) {
    throw new StackError(
      "STACK_TOOL_MISSING",
      `${command} is not on PATH after installing ${packages.join(", ")}`,
      name,
    );
  }
  return installed;
}
