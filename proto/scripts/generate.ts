// Generates the TypeScript code of @svc/proto from its .proto files.
//
//   bun run proto/scripts/generate.ts           buf lint, then buf generate into proto/gen
//   bun run proto/scripts/generate.ts --check   buf lint, then buf generate into a temp dir and
//                                               compare it byte for byte with proto/gen; exits 1
//                                               and lists stale, missing and extra files if they differ
//
// buf and the ts-proto plugin (protoc-gen-ts_proto) are resolved from node_modules/.bin, which is put
// first on the child's PATH. buf.yaml has no deps and buf.gen.yaml uses only a local plugin, so no step
// touches the network.
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, relative, resolve } from "node:path";

const protoDir = resolve(import.meta.dir, "..");
const repoRoot = resolve(protoDir, "..");
const genDirName = "gen";

/** node_modules/.bin folders that may hold buf and protoc-gen-ts_proto, nearest first. */
const binDirs = [join(protoDir, "node_modules", ".bin"), join(repoRoot, "node_modules", ".bin")];

function findBin(name: string): string {
  for (const dir of binDirs) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${name} not found in ${binDirs.join(" or ")}; run \`bun install\` at the repository root`);
}

const buf = findBin("buf");
// Fail early with a clear message if the plugin is missing; buf itself finds it on PATH.
findBin("protoc-gen-ts_proto");

const childEnv: Record<string, string | undefined> = {
  ...process.env,
  PATH: [...binDirs, process.env.PATH ?? ""].join(delimiter),
};

async function run(args: string[]): Promise<void> {
  const proc = Bun.spawn([buf, ...args], {
    cwd: protoDir,
    env: childEnv,
    stdout: "inherit",
    stderr: "inherit",
  });
  const code = await proc.exited;
  if (code !== 0) {
    throw new Error(`buf ${args.join(" ")} exited with code ${code}`);
  }
}

/** Relative paths (with "/" separators) of all files under dir; empty if dir does not exist. */
async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .sort();
}

interface Diff {
  stale: string[];
  missing: string[];
  extra: string[];
}

async function compareDirs(expectedDir: string, actualDir: string): Promise<Diff> {
  const expected = await listFiles(expectedDir);
  const actual = await listFiles(actualDir);
  const actualSet = new Set(actual);
  const expectedSet = new Set(expected);
  const diff: Diff = { stale: [], missing: [], extra: [] };
  for (const file of expected) {
    if (!actualSet.has(file)) {
      diff.missing.push(file);
      continue;
    }
    const [want, got] = await Promise.all([readFile(join(expectedDir, file)), readFile(join(actualDir, file))]);
    if (!want.equals(got)) diff.stale.push(file);
  }
  for (const file of actual) {
    if (!expectedSet.has(file)) diff.extra.push(file);
  }
  return diff;
}

async function check(): Promise<number> {
  const tempDir = await mkdtemp(join(tmpdir(), "svc-proto-gen-"));
  try {
    // buf.gen.yaml writes to `gen`; --output moves that under the temp dir.
    await run(["generate", "--output", tempDir]);
    const committed = join(protoDir, genDirName);
    const diff = await compareDirs(join(tempDir, genDirName), committed);
    const problems = diff.stale.length + diff.missing.length + diff.extra.length;
    if (problems === 0) {
      console.log(`proto: ${relative(repoRoot, committed)} is up to date`);
      return 0;
    }
    const show = (label: string, files: string[]) => {
      for (const file of files) console.error(`  ${label}: proto/${genDirName}/${file}`);
    };
    console.error(`proto: ${relative(repoRoot, committed)} is out of date (${problems} file(s)):`);
    show("stale  ", diff.stale);
    show("missing", diff.missing);
    show("extra  ", diff.extra);
    console.error("Run `bun run proto:gen` and commit the result.");
    return 1;
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((arg) => arg !== "--check");
  if (unknown.length > 0) {
    console.error(`unknown argument(s): ${unknown.join(" ")}\nusage: generate.ts [--check]`);
    return 2;
  }
  await run(["lint"]);
  if (argv.includes("--check")) return check();
  await run(["generate"]);
  console.log(`proto: generated into ${relative(repoRoot, join(protoDir, genDirName))}`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(`proto: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
