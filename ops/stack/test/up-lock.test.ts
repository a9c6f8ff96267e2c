import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, waitFor } from "@svc/common";
import { thrownBy } from "@svc/testkit";
import { StackError } from "../src/errors.ts";
import { startTimeOf } from "../src/proc-process.ts";
import { acquireUpLock, removeStaleLock, upLockPath } from "../src/up-lock.ts";

const dirs: string[] = [];
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "up-lock-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A lock file as another `up` would have left it. */
const writeLock = (dir: string, pid: number, startTime = startTimeOf(pid) ?? "") =>
  writeFileSync(upLockPath(dir), `${pid}\n${startTime}\n`);

test("the lock holds this process's pid and start time, and the release deletes it", () => {
  const dir = stateDir();
  const release = acquireUpLock(dir);
  expect(readFileSync(upLockPath(dir), "utf8")).toBe(`${process.pid}\n${startTimeOf(process.pid)}\n`);
  release();
  expect(existsSync(upLockPath(dir))).toBe(false);
});

test("a second take while the lock is held fails with STACK_LOCKED naming the holder's pid", () => {
  const dir = stateDir();
  const release = acquireUpLock(dir);
  try {
    const error = thrownBy(() => acquireUpLock(dir), StackError);
    expect(error.code).toBe("STACK_LOCKED");
    expect(error.canRetry).toBe(true);
    expect(error.subject).toBe(upLockPath(dir));
    expect(error.message).toContain(`pid ${process.pid}`);
  } finally {
    release();
  }
  acquireUpLock(dir)();
});

test("a lock held by another live process is refused, naming that process", async () => {
  const dir = stateDir();
  const holder = Bun.spawn(["sleep", "30"]);
  try {
    await waitFor("the holder's start time", async () => startTimeOf(holder.pid), { timeoutMs: 5_000 });
    writeLock(dir, holder.pid);
    const error = thrownBy(() => acquireUpLock(dir), StackError);
    expect(error.code).toBe("STACK_LOCKED");
    expect(error.message).toContain(`pid ${holder.pid}`);
  } finally {
    holder.kill("SIGKILL");
    await holder.exited;
  }
});

test("a lock left by a process that has exited is taken over", async () => {
  const dir = stateDir();
  const gone = Bun.spawn(["true"]);
  await gone.exited;
  expect(isAlive(gone.pid)).toBe(false);
  writeLock(dir, gone.pid, "12345");
  const release = acquireUpLock(dir);
  expect(readFileSync(upLockPath(dir), "utf8").split("\n")[0]).toBe(String(process.pid));
  release();
});

test("a lock whose pid now names another process (other start time) is stale and taken over", () => {
  const dir = stateDir();
  // This process is alive, but it did not start at tick 1: the pid was "reused".
  writeLock(dir, process.pid, "1");
  const release = acquireUpLock(dir);
  expect(readFileSync(upLockPath(dir), "utf8")).toBe(`${process.pid}\n${startTimeOf(process.pid)}\n`);
  release();
});

test("an unreadable lock (no pid in it) is taken over", () => {
  const dir = stateDir();
  writeFileSync(upLockPath(dir), "garbage\n");
  acquireUpLock(dir)();
  expect(existsSync(upLockPath(dir))).toBe(false);
});

test("the release leaves a lock alone that is no longer this process's", () => {
  const dir = stateDir();
  const release = acquireUpLock(dir);
  writeLock(dir, 1);
  release();
  expect(readFileSync(upLockPath(dir), "utf8").split("\n")[0]).toBe("1");
});

test("removing a stale lock puts back a fresh one that another taker wrote after the stale one was read", () => {
  const dir = stateDir();
  writeLock(dir, process.pid);
  const fresh = readFileSync(upLockPath(dir), "utf8");
  // What this taker had judged stale is not what the file holds now.
  removeStaleLock(upLockPath(dir), "4242\n1\n");
  expect(readFileSync(upLockPath(dir), "utf8")).toBe(fresh);
  expect(readdirSync(dir)).toEqual(["up.lock"]);
  removeStaleLock(upLockPath(dir), fresh);
  expect(readdirSync(dir)).toEqual([]);
});
