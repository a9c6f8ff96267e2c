import { expect, test } from "bun:test";
import { cpuMsOf, treeCpuMs } from "../src/proc-process.ts";

test("cpuMsOf: a busy child's CPU grows from what it had; a pid that does not exist has none", async () => {
  // A child of its own, busy for a while: its CPU (user + system, 10 ms steps) is read from /proc while it runs.
  const child = Bun.spawn(["bash", "-c", "while :; do :; done"], { stdout: "ignore", stderr: "ignore" });
  try {
    const first = cpuMsOf(child.pid);
    expect(first).toBeNumber();
    const deadline = performance.now() + 4_000;
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

test("treeCpuMs: sums the CPU of a process and every descendant, a child in a session of its own too", async () => {
  // The busy subshell calls setsid, as PostgreSQL's backends do: it leaves the group but stays a descendant.
  const child = Bun.spawn(["bash", "-c", "setsid bash -c 'while :; do :; done' & while :; do :; done"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const deadline = performance.now() + 4_000;
  try {
    // The tree's CPU passes its root's own by more than a rounding step only when the descendant's is counted.
    let root = cpuMsOf(child.pid) ?? 0;
    let [tree = 0, none = 0] = treeCpuMs([child.pid, 2 ** 22 + 1]);
    while (tree < root + 100 && performance.now() < deadline) {
      await Bun.sleep(10);
      [tree = 0, none = 0] = treeCpuMs([child.pid, 2 ** 22 + 1]);
      root = cpuMsOf(child.pid) ?? root;
    }
    expect(tree).toBeGreaterThanOrEqual(root + 100);
    // A root that is no process has no tree.
    expect(none).toBe(0);
  } finally {
    // The descendant is killed by its own pid: it is in no group of the child's.
    for (const line of Bun.spawnSync(["pgrep", "-P", String(child.pid)])
      .stdout.toString()
      .split("\n")) {
      if (line.trim() !== "") process.kill(Number(line), 9);
    }
    child.kill(9);
    await child.exited;
  }
  expect(treeCpuMs([child.pid])).toEqual([0]);
});

test("treeCpuMs: a descendant that exited and was reaped still counts, in its parent's share", async () => {
  // A child that spins until its CPU limit (`ulimit -t 1`: one second of its own CPU, however fast the machine)
  // ends it; the root waits for it, then becomes `sleep`, which has used no CPU of its own.
  const child = Bun.spawn(["bash", "-c", "bash -c 'ulimit -t 1; while :; do :; done'; exec sleep 30"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    const deadline = performance.now() + 20_000;
    const comm = () => Bun.file(`/proc/${child.pid}/comm`).text();
    while ((await comm()).trim() !== "sleep" && performance.now() < deadline) await Bun.sleep(10);
    expect((await comm()).trim()).toBe("sleep");
    const [tree = 0] = treeCpuMs([child.pid]);
    // The root's own CPU is its shell's start and exec; the work is the reaped child's.
    expect(cpuMsOf(child.pid) as number).toBeLessThan(100);
    expect(tree).toBeGreaterThanOrEqual(900);
  } finally {
    child.kill(9);
    await child.exited;
  }
});
