import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, waitFor } from "@svc/common";
import { readPid, spawnDaemon, stopDaemon } from "../src/daemon.ts";
import { StackError } from "../src/errors.ts";

/** Directories of the running test, deleted after it. */
const made: string[] = [];
const dir = () => {
  const path = mkdtempSync(join(tmpdir(), "daemon-test-"));
  made.push(path);
  return path;
};
afterEach(() => {
  for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
});

test("a daemon runs in its own process group and stopDaemon ends it", async () => {
  const d = dir();
  const pidFile = join(d, "sleeper.pid");
  const daemon = spawnDaemon({
    name: "sleeper",
    command: "sh",
    args: ["-c", "sleep 300 & wait"],
    env: process.env,
    logFile: join(d, "sleeper.log"),
    pidFile,
  });
  expect(readPid(pidFile)).toBe(daemon.pid);
  expect(isAlive(daemon.pid)).toBe(true);
  expect(await stopDaemon(pidFile, 5_000)).toBe(true);
  // stopDaemon returns once the process has exited (a zombie counts); this process reaps it a moment later.
  await waitFor("reaped", async () => (isAlive(daemon.pid) ? undefined : true), { timeoutMs: 5_000, intervalMs: 10 });
  expect(readPid(pidFile)).toBeUndefined();
  expect(await stopDaemon(pidFile)).toBe(false);
});

test("a daemon that exits reports STACK_START_FAILED with its last log lines", async () => {
  const d = dir();
  const daemon = spawnDaemon({
    name: "crasher",
    command: "sh",
    args: ["-c", "echo bad config line 7 >&2; exit 3"],
    env: process.env,
    logFile: join(d, "crasher.log"),
    pidFile: join(d, "crasher.pid"),
  });
  const error = await waitFor("exit", async () => daemon.exitError(), { timeoutMs: 10_000, intervalMs: 10 });
  expect(error).toBeInstanceOf(StackError);
  expect((error as StackError).code).toBe("STACK_START_FAILED");
  expect(error.message).toContain("bad config line 7");
});
