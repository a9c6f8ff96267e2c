import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive } from "@svc/common";
import { livePid, parsePidRecord, readPidRecord, spawnDaemon, stopDaemon } from "../src/daemon.ts";
import { startTimeOf } from "../src/proc-process.ts";

const dirs: string[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const pid of pids.splice(0)) if (isAlive(pid)) process.kill(-pid, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sleeper(): { pid: number; pidFile: string } {
  const dir = mkdtempSync(join(tmpdir(), "pid-record-"));
  dirs.push(dir);
  const pidFile = join(dir, "sleeper.pid");
  const daemon = spawnDaemon({
    name: "sleeper",
    command: "sleep",
    args: ["30"],
    env: process.env,
    logFile: join(dir, "sleeper.log"),
    pidFile,
  });
  pids.push(daemon.pid);
  return { pid: daemon.pid, pidFile };
}

test("a pid file holds the pid and the process's start time", () => {
  const { pid, pidFile } = sleeper();
  expect(readPidRecord(pidFile)).toEqual({ pid, startTime: startTimeOf(pid) });
  expect(readFileSync(pidFile, "utf8")).toBe(`${pid}\n${startTimeOf(pid)}\n`);
  expect(livePid(pidFile)).toBe(pid);
});

test("a live pid with another start time (a reused pid) is not ours: not live, and stopDaemon leaves it alone", async () => {
  const { pid, pidFile } = sleeper();
  writeFileSync(pidFile, `${pid}\n1\n`);
  expect(livePid(pidFile)).toBeUndefined();
  expect(await stopDaemon(pidFile, 1_000)).toBe(false);
  expect(isAlive(pid)).toBe(true);
  expect(readPidRecord(pidFile)).toBeUndefined();
});

test("a pid file without a start time (written before it had one) is read as before", () => {
  const { pid, pidFile } = sleeper();
  writeFileSync(pidFile, `${pid}\n`);
  expect(readPidRecord(pidFile)).toEqual({ pid, startTime: undefined });
  expect(livePid(pidFile)).toBe(pid);
});

test("a pid file without a pid names no process", () => {
  expect(parsePidRecord("")).toBeUndefined();
  expect(parsePidRecord("abc\n123\n")).toBeUndefined();
  expect(parsePidRecord("-5\n")).toBeUndefined();
});
