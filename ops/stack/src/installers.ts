import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { StackContext } from "./context.ts";
import { StackError } from "./errors.ts";
import type { ProgressTask } from "./progress.ts";

type Env = Record<string, string | undefined>;

import { runTool } from "./run-tool.ts";

let aptUpdated = false;

/** Installs Debian packages (root only; `apt-get update` once per process first). */
export async function aptInstall(env: Env, task: ProgressTask, packages: string[]): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new StackError(
      "STACK_TOOL_MISSING",
      `missing Debian packages ${packages.join(", ")}: install them (apt-get install ${packages.join(" ")})`,
      packages.join(","),
    );
  }
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    await runTool("apt", "apt-get", ["update", "-q"], { env: aptEnv, onLine: (l) => task.note(l) });
    aptUpdated = true;
  }
  await runTool("apt", "apt-get", ["install", "-y", "-q", "--no-install-recommends", ...packages], {
    env: aptEnv,
    onLine: (l) => task.note(l),
  });
}

export async function hasCommand(command: string): Promise<boolean> {
  return Bun.which(command) !== null;
}

/** Short content hash of files: the cache key of an artifact built from them. */
export function hashFiles(paths: string[]): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const path of paths) hasher.update(readFileSync(path));
  return hasher.digest("hex").slice(0, 12);
}

/** A Go command built from a pinned module in ops/tools/<name>. */
export interface GoTool {
  name: string;
  moduleDir: string;
  pkg: string;
  /** The module's own source files besides go.mod and go.sum (a peer with a main.go); part of the cache key. */
  sources?: string[];
}

/** The cache key of a Go tool: its go.mod, go.sum and own sources; a change to any of them builds it again. */
export function goToolKey(tool: GoTool): string {
  return hashFiles(["go.mod", "go.sum", ...(tool.sources ?? [])].map((file) => join(tool.moduleDir, file)));
}

/** Where `ensureGoBinary` puts a Go tool in the cache: `<cache>/bin/<name>-<key>`. */
export const goBinaryPath = (cacheDir: string, tool: GoTool) =>
  join(cacheDir, "bin", `${tool.name}-${goToolKey(tool)}`);

/**
 * Builds a Go command from a pinned wrapper module in ops/tools/<name> into the cache, keyed by the hash of the
 * module's go.mod, go.sum and own sources. Progress: packages compiled of the command's dependency count.
 */
export async function ensureGoBinary(
  ctx: Pick<StackContext, "cacheDir" | "env">,
  task: ProgressTask,
  tool: GoTool,
): Promise<string> {
  const target = goBinaryPath(ctx.cacheDir, tool);
  const binDir = dirname(target);
  if (existsSync(target)) return target;
  if (!(await hasCommand("go"))) {
    throw new StackError("STACK_TOOL_MISSING", `${tool.name}: the Go toolchain (go) is needed to build it`, tool.name);
  }
  mkdirSync(binDir, { recursive: true });
  const run = { cwd: tool.moduleDir, env: { ...ctx.env, GOFLAGS: "-mod=mod -buildvcs=false" } };
  task.update(0, "downloading modules");
  await runTool(tool.name, "go", ["mod", "download"], { ...run, onLine: (l) => task.note(l) });
  const deps = await runTool(tool.name, "go", ["list", "-deps", tool.pkg], run);
  const total = deps.split("\n").filter((l) => l.trim() !== "").length;
  task.setTotal(total);
  let built = 0;
  const partial = `${target}.partial`;
  await runTool(tool.name, "go", ["build", "-v", "-trimpath", "-ldflags=-s -w", "-o", partial, tool.pkg], {
    ...run,
    onLine: (line) => {
      built += 1;
      task.update(Math.min(built, total), `compiling ${line}`);
    },
  });
  renameSync(partial, target);
  task.done(`built ${target}`);
  return target;
}

/** Copies Maven artifacts into the cache with a pinned maven-dependency-plugin. */
export async function mavenFetch(env: Env, task: ProgressTask, subject: string, args: string[]): Promise<void> {
  if (!(await hasCommand("mvn"))) await aptInstall(env, task, ["maven"]);
  let downloaded = 0;
  await runTool(subject, "mvn", ["-B", "-q", "-ntp", ...args], {
    env,
    onLine: (line) => {
      downloaded += 1;
      task.note(line);
    },
  });
  task.note(`maven: ${downloaded} lines of output`);
}

export const MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/** A JDK home of at least `minMajor`, preferring the lowest such version; undefined when none is installed. */
export function findJavaHome(minMajor: number, env: Record<string, string | undefined>): string | undefined {
  const candidates = new Set<string>();
  if (env.JAVA_HOME) candidates.add(env.JAVA_HOME);
  if (existsSync("/usr/lib/jvm")) {
    for (const entry of readdirSync("/usr/lib/jvm")) candidates.add(join("/usr/lib/jvm", entry));
  }
  let best: { home: string; major: number } | undefined;
  for (const home of candidates) {
    const release = join(home, "release");
    if (!existsSync(join(home, "bin", "java")) || !existsSync(release)) continue;
    const match = /JAVA_VERSION="(\d+)/.exec(readFileSync(release, "utf8"));
    const major = match?.[1] ? Number(match[1]) : 0;
    if (major >= minMajor && (best === undefined || major < best.major)) best = { home, major };
  }
  return best?.home;
}

/** Makes sure a JDK of at least `minMajor` exists (OpenJDK 17 from Debian otherwise) and returns its home. */
export async function ensureJava(
  task: ProgressTask,
  minMajor: number,
  env: Record<string, string | undefined>,
): Promise<string> {
  const found = findJavaHome(minMajor, env) ?? findJavaHome(17, env);
  if (found) return found;
  await aptInstall(env, task, ["openjdk-17-jre-headless"]);
  const installed = findJavaHome(17, env);
  if (!installed) throw new StackError("STACK_TOOL_MISSING", "no JDK 17+ after installing openjdk-17", "java");
  return installed;
}

export function removeQuietly(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
