import { expect, test } from "bun:test";
import { killAllTracked, runToEnd, spawnTracked } from "../src/spawn-tracked.ts";

test("killAllTracked kills every tracked process still running, and forgets those reaped", async () => {
  const first = spawnTracked("sleep a", ["sleep", "30"]);
  const second = spawnTracked("sleep b", ["sleep", "30"]);
  expect(killAllTracked()).toBe(2);
  expect(await first.proc.exited).not.toBe(0);
  expect(await second.proc.exited).not.toBe(0);
  expect(first.proc.signalCode).toBe("SIGKILL");
  await first.stop();
  await second.stop();
  expect(killAllTracked()).toBe(0);
});

test("runToEnd gives up on a command that does not end within its timeout: BENCH_STEP_FAILED, the process killed", async () => {
  const started = performance.now();
  const error = await runToEnd("sleep", ["sleep", "30"], { timeoutMs: 200 }).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: "BENCH_STEP_FAILED", subject: "sleep" });
  expect((error as Error).message).toContain("did not end within 200 ms");
  expect(performance.now() - started).toBeLessThan(10_000);
  expect(killAllTracked()).toBe(0);
});
