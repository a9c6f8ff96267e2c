import { expect, test } from "bun:test";
import { cpuMsOf, groupCpuMs, processGroupOf } from "../src/proc-process.ts";

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

test("groupCpuMs: sums the CPU of every process in the group, its forked children too; an empty group has none", async () => {
  // setsid: the child leads a process group of its own, and the busy subshell it forks joins that group.
  const child = Bun.spawn(["setsid", "bash", "-c", "(while :; do :; done) & while :; do :; done"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    const deadline = performance.now() + 10_000;
    while (processGroupOf(child.pid) !== child.pid && performance.now() < deadline) await Bun.sleep(10);
    expect(processGroupOf(child.pid)).toBe(child.pid);
    // The group's CPU passes its leader's own by more than a rounding step only when the subshell's is counted.
    let leader = cpuMsOf(child.pid) ?? 0;
    let group = groupCpuMs(child.pid);
    while (group < leader + 100 && performance.now() < deadline) {
      await Bun.sleep(10);
      group = groupCpuMs(child.pid);
      leader = cpuMsOf(child.pid) ?? leader;
    }
    expect(group).toBeGreaterThanOrEqual(leader + 100);
  } finally {
    process.kill(-child.pid, 9);
    await child.exited;
  }
  const deadline = performance.now() + 10_000;
  while (groupCpuMs(child.pid) > 0 && performance.now() < deadline) await Bun.sleep(10);
  expect(groupCpuMs(child.pid)).toBe(0);
});
