import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { installLockPath, withInstallLock } from "../src/install-lock.ts";

const dirs: string[] = [];
function cacheDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "install-lock-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("a second install of the same server waits for the first and never runs beside it", async () => {
  const cache = cacheDir();
  const events: string[] = [];
  let finishFirst = () => {};
  const firstMayFinish = new Promise<void>((resolve) => {
    finishFirst = resolve;
  });
  const waits: number[] = [];
  const first = withInstallLock(cache, "minio", async () => {
    events.push("first start");
    await firstMayFinish;
    events.push("first end");
  });
  const second = withInstallLock(
    cache,
    "minio",
    async () => {
      events.push("second start");
    },
    { pollMs: 10, onWait: (pid) => waits.push(pid) },
  );
  while (waits.length === 0) await Bun.sleep(5); // the second has found the lock held
  expect(events).toEqual(["first start"]);
  finishFirst();
  await Promise.all([first, second]);
  expect(events).toEqual(["first start", "first end", "second start"]);
  expect(waits).toEqual([process.pid]);
  expect(existsSync(installLockPath(cache, "minio"))).toBe(false);
});

test("installs of different servers do not wait for each other", async () => {
  const cache = cacheDir();
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const kafka = withInstallLock(cache, "kafka", () => held);
  await withInstallLock(cache, "etcd", async () => {}, {
    onWait: () => {
      throw new Error("etcd waited for kafka");
    },
  });
  release();
  await kafka;
});

test("a lock left by an installer that died is taken over", async () => {
  const cache = cacheDir();
  const gone = Bun.spawn(["true"]);
  await gone.exited;
  const file = installLockPath(cache, "etcd");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${gone.pid}\n12345\n`);
  let ran = false;
  await withInstallLock(cache, "etcd", async () => {
    ran = true;
  });
  expect(ran).toBe(true);
});

test("a failed install releases the lock and reports its error", async () => {
  const cache = cacheDir();
  const failure = withInstallLock(cache, "keycloak", async () => {
    throw new Error("maven failed");
  });
  await expect(failure).rejects.toThrow("maven failed");
  expect(existsSync(installLockPath(cache, "keycloak"))).toBe(false);
});
