import { expect, test } from "bun:test";
import { cpuMsOf } from "../src/proc-process.ts";

test("cpuMsOf: a busy child's CPU grows from what it had; a pid that does not exist has none", async () => {
  // A child of its own, busy for a while: its CPU (user + system, 10 ms steps) is read from /proc while it runs.
  const child = Bun.spawn(["bash", "-c", "while :; do :; done"], { stdout: "ignore", stderr: "ignore" });
  try {
    const first = cpuMsOf(child.pid);
    expect(first).toBeNumber();
    const deadline = performance.now() + 10_000;
    let now = first as number;
    while (now <= (first as number) + 50 && performance.now() < deadline) {
      await Bun.sleep(10);
      now = cpuMsOf(child.pid) ?? now;
    }
    expect(now).toBeGreaterThan((first as number) + 50);
  } finally {
    child.kill(9);
    await child.exited;
  }
  // Reaped: /proc has no such process any more.
  expect(cpuMsOf(child.pid)).toBeUndefined();
  expect(cpuMsOf(2 ** 22 + 1)).toBeUndefined();
});
