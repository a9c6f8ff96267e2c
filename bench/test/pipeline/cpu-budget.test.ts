import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { machineCpuMs, startCpuMeter } from "../../src/pipeline/cpu-budget.ts";

test("the meter counts a server and its children by its pid file, and the machine's busy CPU", async () => {
  // A stand-in state directory whose `minio` pid file names a busy process of our own with a busy child: the meter
  // reads servers by their pid files, so it counts these as it would the stack's.
  const stateDir = mkdtempSync(join(tmpdir(), "cpu-budget-"));
  const busy = Bun.spawn(["setsid", "bash", "-c", "(while :; do :; done) & while :; do :; done"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    mkdirSync(join(stateDir, "pids"));
    writeFileSync(join(stateDir, "pids", "minio.pid"), `${busy.pid}\n`);
    const deadline = performance.now() + 4_000;
    const meter = startCpuMeter(stateDir);
    let spent = meter.spent({ consumer: 5, agent: undefined });
    while ((spent.servers.minio ?? 0) < 200 && performance.now() < deadline) {
      await Bun.sleep(20);
      spent = meter.spent({ consumer: 5, agent: undefined });
    }
    expect(spent.servers.minio).toBeGreaterThanOrEqual(200);
    // The machine was at least as busy as the group, and the servers with no pid file have no figure.
    expect(spent.machineBusyMs).toBeGreaterThanOrEqual((spent.servers.minio as number) - 20);
    expect(spent.servers.kafka).toBeUndefined();
    expect(spent.servers.postgres).toBeUndefined();
    // Our services' figures as given; one not read is left out.
    expect(spent.ours).toEqual({ consumer: 5 });
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
