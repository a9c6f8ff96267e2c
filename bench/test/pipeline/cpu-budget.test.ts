import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { machineCpuMs, startCpuMeter } from "../../src/pipeline/cpu-budget.ts";

test("the meter counts a server's process group by its pid file, and the machine's busy CPU", async () => {
  // A stand-in state directory whose `minio` pid file names a busy process group of our own (setsid): the meter
  // reads servers by their pid files, so it counts this one as it would the stack's.
  const stateDir = mkdtempSync(join(tmpdir(), "cpu-budget-"));
  const busy = Bun.spawn(["setsid", "bash", "-c", "(while :; do :; done) & while :; do :; done"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    mkdirSync(join(stateDir, "pids"));
    writeFileSync(join(stateDir, "pids", "minio.pid"), `${busy.pid}\n`);
    const deadline = performance.now() + 10_000;
    // setsid has made the group once the pid leads it (stat's group field).
    let meter = startCpuMeter(stateDir);
    while (meter.spent().servers.minio === undefined && performance.now() < deadline) {
      await Bun.sleep(10);
      meter = startCpuMeter(stateDir);
    }
    let spent = meter.spent();
    while ((spent.servers.minio ?? 0) < 200 && performance.now() < deadline) {
      await Bun.sleep(20);
      spent = meter.spent();
    }
    expect(spent.servers.minio).toBeGreaterThanOrEqual(200);
    // The machine was at least as busy as the group, and the servers with no pid file have no figure.
    expect(spent.machineBusyMs).toBeGreaterThanOrEqual((spent.servers.minio as number) - 20);
    expect(spent.servers.kafka).toBeUndefined();
    expect(spent.servers.postgres).toBeUndefined();
  } finally {
    process.kill(-busy.pid, 9);
    await busy.exited;
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test("machineCpuMs: busy never exceeds total, and both only grow", async () => {
  const first = machineCpuMs();
  expect(first.busy).toBeGreaterThan(0);
  expect(first.busy).toBeLessThanOrEqual(first.total);
  const deadline = performance.now() + 5_000;
  let second = machineCpuMs();
  while (second.total === first.total && performance.now() < deadline) {
    await Bun.sleep(10);
    second = machineCpuMs();
  }
  expect(second.total).toBeGreaterThan(first.total);
  expect(second.busy).toBeGreaterThanOrEqual(first.busy);
});
