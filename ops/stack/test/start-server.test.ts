import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "@svc/common";
import { rejectionOf } from "@svc/testkit";
import { livePid, stopDaemon } from "../src/daemon.ts";
import { StackError } from "../src/errors.ts";
import { freePort } from "../src/free-port.ts";
import { startServer } from "../src/start-server.ts";
import { logFileOf, pidFileOf } from "../src/state-files.ts";
import { fakeService, testContext } from "./support/fake-service.ts";
import { answers, type HeldPort, holdPort, LISTENER_SCRIPT } from "./support/hold-port.ts";

test("a server whose port is taken is not spawned: STACK_PORT_IN_USE names the port and its holder", async () => {
  const ctx = testContext();
  const held = await holdPort();
  const service = fakeService("fake", [held.port], { probe: () => answers(held.port) });
  try {
    const error = await rejectionOf(
      startServer(ctx, service, { command: process.execPath, args: [LISTENER_SCRIPT, "127.0.0.1", String(held.port)] }),
      StackError,
    );
    expect(error.code).toBe("STACK_PORT_IN_USE");
    expect(error.message).toContain(`port ${held.port} is in use by pid ${held.pid}`);
    // Nothing ran: no pid file, no log.
    expect(existsSync(pidFileOf(ctx, "fake"))).toBe(false);
    expect(existsSync(logFileOf(ctx, "fake"))).toBe(false);
  } finally {
    await held.release();
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
});

test("a server of ours that answers on its port is ready; dropEnv keeps inherited variables from it", async () => {
  const ctx = testContext({ KC_HTTP_PORT: "1", SVC_KEPT: "kept" });
  const port = await freePort();
  const envFile = join(ctx.stateDir, "server-env.json");
  const service = fakeService("fake", [port], { probe: () => answers(port) });
  try {
    const daemon = await startServer(ctx, service, {
      command: process.execPath,
      args: [LISTENER_SCRIPT, "127.0.0.1", String(port), envFile],
      env: { SVC_OWN: "own" },
      dropEnv: (key) => key.startsWith("KC_"),
    });
    expect(livePid(pidFileOf(ctx, "fake"))).toBe(daemon.pid);
    const env = JSON.parse(readFileSync(envFile, "utf8")) as Record<string, string>;
    expect(env.KC_HTTP_PORT).toBeUndefined();
    expect(env.SVC_KEPT).toBe("kept");
    expect(env.SVC_OWN).toBe("own");
  } finally {
    await stopDaemon(pidFileOf(ctx, "fake"), 5_000);
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
});

test("a server that exits ends the wait at once (waitFor's abort) with STACK_START_FAILED and its log", async () => {
  const ctx = testContext();
  const port = await freePort();
  // A long timeout: only the abort can end this wait quickly.
  const service = fakeService("fake", [port], { readiness: { timeoutMs: 60_000, intervalMs: 20 } });
  const t0 = performance.now();
  try {
    const error = await rejectionOf(
      startServer(ctx, service, { command: "sh", args: ["-c", "echo bind: address already in use >&2; exit 1"] }),
      StackError,
    );
    expect(error.code).toBe("STACK_START_FAILED");
    expect(error.subject).toBe("fake");
    expect(error.message).toContain("bind: address already in use");
    expect(performance.now() - t0).toBeLessThan(10_000);
  } finally {
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
});

test("another process answering on the port while ours runs is never taken for ours: STACK_PORT_IN_USE", async () => {
  const ctx = testContext();
  const port = await freePort();
  let intruder: HeldPort | undefined;
  // The port is free when checked; right after the spawn another process takes it, as a second stack's server
  // might while ours starts (and would then fail to bind).
  const service = fakeService("fake", [port], {
    probe: async () => {
      intruder ??= await holdPort("127.0.0.1", port);
      return answers(port);
    },
  });
  try {
    const error = await rejectionOf(startServer(ctx, service, { command: "sleep", args: ["30"] }), StackError);
    expect(error.code).toBe("STACK_PORT_IN_USE");
    expect(error.message).toContain(`held by pid ${intruder?.pid}`);
    // Our own process still runs: only the port's holder made the difference.
    const ours = livePid(pidFileOf(ctx, "fake"));
    expect(ours !== undefined && isAlive(ours)).toBe(true);
  } finally {
    await intruder?.release();
    await stopDaemon(pidFileOf(ctx, "fake"), 5_000);
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
});

test("a server that never answers fails with STACK_NOT_READY naming it and its pid", async () => {
  const ctx = testContext();
  const service = fakeService("fake", [await freePort()], { readiness: { timeoutMs: 300, intervalMs: 20 } });
  try {
    const error = await rejectionOf(startServer(ctx, service, { command: "sleep", args: ["30"] }), StackError);
    expect(error.code).toBe("STACK_NOT_READY");
    expect(error.subject).toBe("fake");
    expect(error.message).toContain(`pid ${livePid(pidFileOf(ctx, "fake"))}`);
  } finally {
    await stopDaemon(pidFileOf(ctx, "fake"), 5_000);
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
});
