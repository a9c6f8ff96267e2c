import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { waitFor } from "@svc/common";
import { describeWithServers, rejectionOf } from "@svc/testkit";
import type { StackContext } from "../src/context.ts";
import { livePid, spawnDaemon, stopDaemon } from "../src/daemon.ts";
import { StackError } from "../src/errors.ts";
import { freePort } from "../src/free-port.ts";
import { startTimeOf } from "../src/proc-process.ts";
import { type Progress, silentProgress } from "../src/progress.ts";
import { etcd } from "../src/services/etcd.ts";
import { down, selectServices, up } from "../src/stack.ts";
import { startServer } from "../src/start-server.ts";
import { logFileOf, pidFileOf } from "../src/state-files.ts";
import { upLockPath } from "../src/up-lock.ts";
import { fakeService, testContext } from "./support/fake-service.ts";
import { answers, holdPort, LISTENER_SCRIPT } from "./support/hold-port.ts";

/** A process of "ours" (pid file in the context) that holds no port: `sleep 30` as the server `fake`. */
function spawnSleeper(ctx: StackContext) {
  return spawnDaemon({
    name: "fake",
    command: "sleep",
    args: ["30"],
    env: process.env,
    logFile: logFileOf(ctx, "fake"),
    pidFile: pidFileOf(ctx, "fake"),
  });
}

async function etcdContext(): Promise<StackContext> {
  return testContext({
    SVC_STACK_ETCD_PORT: String(await freePort()),
    SVC_STACK_ETCD_PEER_PORT: String(await freePort()),
  });
}

/** A progress that records the names of the tasks `up` opens. */
function recordingProgress(names: string[]): Progress {
  return {
    task: (name, total) => {
      names.push(name);
      return silentProgress.task(name, total);
    },
    stop() {},
  };
}

test("`up` on a state directory locked by another live process starts nothing", async () => {
  const ctx = await etcdContext();
  const holder = Bun.spawn(["sleep", "30"]);
  try {
    const startTime = await waitFor("its start time", async () => startTimeOf(holder.pid), { timeoutMs: 5_000 });
    await Bun.write(upLockPath(ctx.stateDir), `${holder.pid}\n${startTime}\n`);
    const error = await rejectionOf(up(ctx, selectServices(["etcd"])), StackError);
    expect(error.code).toBe("STACK_LOCKED");
    expect(error.message).toContain(`pid ${holder.pid}`);
    expect(existsSync(logFileOf(ctx, "etcd"))).toBe(false);
  } finally {
    holder.kill("SIGKILL");
    await holder.exited;
    await down(ctx, { purge: true });
  }
});

test("every port is checked before anything is spawned; the failed `up` releases its lock", async () => {
  const ctx = await etcdContext();
  const held = await holdPort();
  const late = fakeService("late", [held.port], { after: ["etcd"] });
  try {
    const error = await rejectionOf(up(ctx, [etcd, late]), StackError);
    expect(error.code).toBe("STACK_PORT_IN_USE");
    expect(error.subject).toBe("late");
    expect(error.message).toContain(`pid ${held.pid}`);
    // etcd, in the first wave, was not started either.
    expect(existsSync(logFileOf(ctx, "etcd"))).toBe(false);
    expect(existsSync(upLockPath(ctx.stateDir))).toBe(false);
  } finally {
    await held.release();
    await down(ctx, { purge: true });
  }
});

test("a server of ours whose port another process answers on is not taken as running", async () => {
  const ctx = testContext();
  const held = await holdPort();
  const service = fakeService("fake", [held.port], { probe: () => answers(held.port) });
  const ours = spawnSleeper(ctx);
  try {
    const error = await rejectionOf(up(ctx, [service]), StackError);
    expect(error.code).toBe("STACK_PORT_IN_USE");
    expect(error.message).toContain(`held by pid ${held.pid}`);
    expect(livePid(pidFileOf(ctx, "fake"))).toBe(ours.pid);
  } finally {
    await held.release();
    await stopDaemon(pidFileOf(ctx, "fake"), 5_000);
    await down(ctx, { purge: true });
  }
});

test("a server of ours that exits while `up` waits for it is started again", async () => {
  const ctx = testContext();
  const port = await freePort();
  const first = spawnSleeper(ctx);
  let probes = 0;
  const service = fakeService("fake", [port], {
    probe: async () => {
      // The second look (inside the wait) finds the first process killed.
      if (++probes === 2) process.kill(first.pid, "SIGKILL");
      return answers(port);
    },
    start: (c) =>
      startServer(c, service, { command: process.execPath, args: [LISTENER_SCRIPT, "127.0.0.1", String(port)] }),
  });
  try {
    const result = await up(ctx, [service]);
    expect(result.timings).toEqual([expect.objectContaining({ name: "fake", alreadyRunning: false })]);
    const second = livePid(pidFileOf(ctx, "fake"));
    expect(second).toBeDefined();
    expect(second).not.toBe(first.pid);
  } finally {
    await stopDaemon(pidFileOf(ctx, "fake"), 5_000);
    await down(ctx, { purge: true });
  }
});

// These start a real etcd: not registered under SVC_TEST_NO_STACK=1 (testkit/README.md).
describeWithServers("up with a real etcd", () => {
  test("two concurrent `up`s on one state directory: one starts etcd, the other fails with STACK_LOCKED", async () => {
    const ctx = await etcdContext();
    try {
      const [first, second] = await Promise.allSettled([
        up(ctx, selectServices(["etcd"])),
        up(ctx, selectServices(["etcd"])),
      ]);
      expect(first?.status).toBe("fulfilled");
      const reason = second?.status === "rejected" ? second.reason : undefined;
      expect(reason).toBeInstanceOf(StackError);
      expect((reason as StackError).code).toBe("STACK_LOCKED");
      expect((reason as StackError).message).toContain(`pid ${process.pid}`);
      // The lock went with the first `up`; the next one finds etcd running.
      expect(existsSync(upLockPath(ctx.stateDir))).toBe(false);
      const again = await up(ctx, selectServices(["etcd"]));
      expect(again.timings).toEqual([expect.objectContaining({ name: "etcd", alreadyRunning: true })]);
    } finally {
      expect(await down(ctx, { purge: true })).toEqual(["etcd"]);
    }
  });

  describe("a running etcd that is not ready (stopped with SIGSTOP)", () => {
    let ctx: StackContext;
    let pid: number;
    beforeAll(async () => {
      ctx = await etcdContext();
      await up(ctx, selectServices(["etcd"]));
      pid = livePid(pidFileOf(ctx, "etcd")) ?? 0;
    });
    afterAll(async () => {
      process.kill(pid, "SIGCONT");
      await down(ctx, { purge: true });
    });

    test("is waited for, not started a second time", async () => {
      const tasks: string[] = [];
      process.kill(pid, "SIGSTOP");
      const pending = up({ ...ctx, progress: recordingProgress(tasks) }, selectServices(["etcd"]));
      try {
        await waitFor("up to wait for etcd", async () => (tasks.includes("wait etcd") ? true : undefined), {
          timeoutMs: 30_000,
        });
      } finally {
        process.kill(pid, "SIGCONT");
      }
      const result = await pending;
      expect(result.timings).toEqual([expect.objectContaining({ name: "etcd", alreadyRunning: true })]);
      expect(livePid(pidFileOf(ctx, "etcd"))).toBe(pid);
    });

    test("fails with STACK_NOT_READY naming it and its pid when it stays not ready", async () => {
      const impatient = { ...etcd, readiness: { timeoutMs: 1_000, intervalMs: 100 } };
      process.kill(pid, "SIGSTOP");
      try {
        const error = await rejectionOf(up(ctx, [impatient]), StackError);
        expect(error.code).toBe("STACK_NOT_READY");
        expect(error.subject).toBe("etcd");
        expect(error.message).toContain(`pid ${pid}`);
        // The waiting `up` did not start a second etcd, nor stop the first.
        expect(livePid(pidFileOf(ctx, "etcd"))).toBe(pid);
      } finally {
        process.kill(pid, "SIGCONT");
      }
    });
  });
});
