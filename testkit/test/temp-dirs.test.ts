import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBunTestWithoutServers } from "./support/run-bun-test.ts";

/** Test files that make temporary directories (and start no servers under SVC_TEST_NO_STACK=1). */
const FILES = [
  "ops/stack/test/daemon.test.ts",
  "ops/stack/test/stack.test.ts",
  "ops/token/test/token-file.test.ts",
  "ops/token/test/refresh-source.test.ts",
  "testkit/test/cleanup-on-signal.test.ts",
];

test("test files leave no temporary directory behind", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "temp-dirs-"));
  try {
    const run = await runBunTestWithoutServers(FILES, { TMPDIR: tmp });
    expect(run.output).toMatch(/^ *0 fail$/m);
    expect(run.exitCode).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 60_000);
