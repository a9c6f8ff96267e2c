import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { createContext, down, type StackContext, silentProgress } from "@svc/stack";
import { CLEANUP_SIGNALS, type CleanupSignal, cleanupOnSignal, describeWithServers } from "../index.ts";
import { jsonLines } from "./support/json-lines.ts";

const exitCodeOf = (signal: CleanupSignal) => 128 + constants.signals[signal];

function scratchStack(): StackContext {
  const stateDir = mkdtempSync(join(tmpdir(), "signal-test-"));
  return createContext({}, { stateDir, progress: silentProgress });
}

/** A handler run with a fake exit and log, and `purge` of the test's choice; no signal is sent. */
function trial(purge: () => Promise<unknown>, purgeTimeoutMs?: number) {
  const ctx = scratchStack();
  const exits: number[] = [];
  const lines: string[] = [];
  const cleanup = cleanupOnSignal(ctx, {
    purge,
    purgeTimeoutMs,
    exit: (code) => exits.push(code),
    log: (line) => lines.push(line),
  });
  const dispose = () => {
    cleanup.remove();
    rmSync(ctx.stateDir, { recursive: true, force: true });
  };
  return { ctx, exits, lines, cleanup, dispose };
}

test("a purge that fails still leaves no state dir, and the exit code is 128 + the signal's number", async () => {
  const t = trial(() => Promise.reject(new Error("disk gone")));
  try {
    await t.cleanup.handle("SIGTERM");
    expect(t.exits).toEqual([143]);
    expect(existsSync(t.ctx.stateDir)).toBe(false);
    expect(t.lines.join("\n")).toContain("disk gone");
  } finally {
    t.dispose();
  }
});

test("a purge that never answers is given up after purgeTimeoutMs", async () => {
  const t = trial(() => new Promise(() => {}), 50);
  try {
    await t.cleanup.handle("SIGINT");
    expect(t.exits).toEqual([130]);
    expect(existsSync(t.ctx.stateDir)).toBe(false);
    expect(t.lines.join("\n")).toContain("no answer within 50 ms");
  } finally {
    t.dispose();
  }
});

test("a second signal during the cleanup joins it: one purge, one exit", async () => {
  let purges = 0;
  let finish = () => {};
  const t = trial(() => {
    purges += 1;
    return new Promise<void>((resolve) => {
      finish = resolve;
    });
  });
  try {
    const first = t.cleanup.handle("SIGHUP");
    const second = t.cleanup.handle("SIGTERM");
    finish();
    await Promise.all([first, second]);
    expect(purges).toBe(1);
    expect(t.exits).toEqual([129]);
  } finally {
    t.dispose();
  }
});

/** Whether the process runs: it exists and is not a zombie (one whose parent has not reaped it). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

const repoRoot = join(import.meta.dir, "..", "..");

/** The parent's environment without its stack: the child prepares a stack of its own. */
function childEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("SVC_STACK_")));
}

describeWithServers("a private stack on a signal (a child process with its own etcd)", () => {
  test.each([...CLEANUP_SIGNALS])(
    "%s kills its servers, deletes its state dir and ends the process with 128 + the signal's number",
    async (signal) => {
      const child = Bun.spawn(
        [
          "bun",
          "--preload",
          join(import.meta.dir, "support", "etcd-stack-preload.ts"),
          join(repoRoot, "ops", "stack", "src", "cli.ts"),
          "up",
          "etcd",
        ],
        { cwd: repoRoot, env: childEnv(), stdout: "pipe", stderr: "pipe" },
      );
      const stderr = new Response(child.stderr).text();
      let stateDir: string | undefined;
      try {
        const lines = jsonLines(child.stdout);
        stateDir = String((await lines.next()).stateDir);
        const etcdPid = Number((await lines.next()).etcdPid);
        expect(runs(etcdPid)).toBe(true);
        expect(existsSync(stateDir)).toBe(true);

        child.kill(signal);
        expect(await child.exited).toBe(exitCodeOf(signal));
        expect(runs(etcdPid)).toBe(false);
        expect(existsSync(stateDir)).toBe(false);
      } catch (error) {
        child.kill("SIGKILL");
        throw new Error(`${error instanceof Error ? error.message : error}\nchild stderr:\n${await stderr}`, {
          cause: error,
        });
      } finally {
        if (stateDir !== undefined && existsSync(stateDir)) {
          await down(createContext(childEnv(), { stateDir, progress: silentProgress }), { purge: true });
        }
      }
    },
    60_000,
  );
});
