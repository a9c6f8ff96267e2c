import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serversAllowed } from "../index.ts";
import { runBunTestWithoutServers } from "./support/run-bun-test.ts";

test("servers are allowed unless SVC_TEST_NO_STACK is 1", () => {
  expect(serversAllowed({})).toBe(true);
  expect(serversAllowed({ SVC_TEST_NO_STACK: "0" })).toBe(true);
  expect(serversAllowed({ SVC_TEST_NO_STACK: "1" })).toBe(false);
});

test("under SVC_TEST_NO_STACK=1 the tests that start servers are not registered, and none is started", async () => {
  // A file where the cache directory should be: installing or starting any server fails at once.
  const scratch = mkdtempSync(join(tmpdir(), "no-servers-"));
  const cache = join(scratch, "cache");
  writeFileSync(cache, "not a directory\n");
  try {
    const run = await runBunTestWithoutServers(
      ["ops/stack/test/stack.test.ts", "testkit/test/cleanup-on-signal.test.ts"],
      { SVC_OPS_CACHE_DIR: cache },
    );
    expect(run.output).toContain("not registered (starts servers): up and down with real servers");
    expect(run.output).toContain("not registered (starts servers): a private stack on a signal");
    expect(run.output).toMatch(/^ *0 fail$/m);
    expect(run.output).not.toMatch(/^ *[1-9][0-9]* skip$/m);
    expect(run.exitCode).toBe(0);
    expect(readdirSync(scratch)).toEqual(["cache"]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}, 60_000);
