import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "@svc/testkit";
import { ensureTool } from "../index.ts";
import { goToolKey } from "../src/installers.ts";
import { cacheDir } from "../src/paths.ts";
import { installedTool } from "../src/tools.ts";

test("a Go tool's cache key follows go.mod, go.sum and its listed sources, nothing else", async () => {
  const { path: dir, remove } = await tempDir("go-tool");
  try {
    for (const file of ["go.mod", "go.sum", "main.go", "README"]) writeFileSync(join(dir, file), `${file} v1`);
    const tool = { name: "peer", moduleDir: dir, pkg: ".", sources: ["main.go"] };
    const first = goToolKey(tool);
    writeFileSync(join(dir, "README"), "README v2");
    expect(goToolKey(tool)).toBe(first);
    writeFileSync(join(dir, "main.go"), "main.go v2");
    const second = goToolKey(tool);
    expect(second).not.toBe(first);
    writeFileSync(join(dir, "go.sum"), "go.sum v2");
    expect(goToolKey(tool)).not.toBe(second);
  } finally {
    await remove();
  }
});

test("grpcurl is built from ops/tools/grpcurl into the tool cache and runs; a second call finds it", async () => {
  const path = await ensureTool("grpcurl");
  expect(path.startsWith(join(cacheDir(process.env), "bin", "grpcurl-"))).toBe(true);
  // What `up --services` prints finds the same program, and nothing in a cache where it was never built
  expect(installedTool("grpcurl")).toBe(path);
  const empty = await tempDir("tool-cache");
  try {
    expect(installedTool("grpcurl", { SVC_OPS_CACHE_DIR: empty.path })).toBeUndefined();
  } finally {
    await empty.remove();
  }
  // Built as a dependency of the pinned module, so it reports no version of its own ("dev build").
  const version = Bun.spawnSync([path, "-version"], { stderr: "pipe", stdout: "pipe" });
  expect(version.exitCode).toBe(0);
  expect(`${version.stdout}${version.stderr}`).toContain("grpcurl");
  expect(await ensureTool("grpcurl")).toBe(path);
}, 600_000);

test("faketime comes from Debian's package and shifts a child's clock", async () => {
  const faketime = await ensureTool("faketime");
  const shifted = Bun.spawnSync([faketime, "-f", "+1y", "date", "+%Y"], { stdout: "pipe" });
  expect(Number(shifted.stdout.toString().trim())).toBe(new Date().getUTCFullYear() + 1);
}, 300_000);

test("bench:kms's h2load comes from Debian's nghttp2-client and runs", async () => {
  const h2load = await ensureTool("h2load");
  const version = Bun.spawnSync([h2load, "--version"], { stdout: "pipe" });
  expect(version.stdout.toString()).toContain("nghttp2");
}, 300_000);
