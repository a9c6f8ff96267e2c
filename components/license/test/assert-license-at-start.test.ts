import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { assertLicenseAtStart } from "../index.ts";
import { captureLogger, DAY, type Fixture, makeFixture, NOW, NOW_S } from "./support/license-fixture.ts";

let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture();
});

afterAll(() => fx?.remove());

test("a valid license: ok, exit code 0, nothing written", async () => {
  const path = await fx.writeLicense("token.jwt", { sub: "c", exp: NOW_S + 90 * DAY });
  const written: string[] = [];
  const check = await assertLicenseAtStart({
    path,
    publicKeyFile: fx.publicKeyFile,
    now: NOW,
    logger: captureLogger().logger,
    write: (line) => written.push(line),
  });
  expect(check.ok).toBe(true);
  expect(check.exitCode).toBe(0);
  expect(written).toEqual([]);
});

test("an expired license: one line naming the code, the file and the fix; non-zero exit code", async () => {
  const path = await fx.writeLicense("expired-token.jwt", { exp: NOW_S - DAY });
  const written: string[] = [];
  const check = await assertLicenseAtStart({
    path,
    publicKeyFile: fx.publicKeyFile,
    now: NOW,
    logger: captureLogger().logger,
    write: (line) => written.push(line),
  });
  expect(check.ok).toBe(false);
  if (check.ok) return;
  expect(check.error.code).toBe("LICENSE_EXPIRED");
  expect(check.exitCode).not.toBe(0);
  expect(written).toEqual([check.message]);
  expect(check.message).not.toContain("\n");
  expect(check.message).toContain(path);
  expect(check.message).toContain("replace token.jwt and restart the service");
});

test("a missing license file is reported the same way", async () => {
  const written: string[] = [];
  const check = await assertLicenseAtStart({
    path: join(fx.dir, "absent.jwt"),
    publicKeyPem: fx.publicKeyPem,
    logger: captureLogger().logger,
    write: (line) => written.push(line),
  });
  expect(check.ok ? "ok" : check.error.code).toBe("LICENSE_UNREADABLE");
  expect(written).toHaveLength(1);
});

test("a failure that is not a license failure is rethrown", async () => {
  const path = await fx.writeLicense("t2.jwt", { exp: NOW_S + 90 * DAY });
  const broken = {
    warn: () => {
      throw new Error("logger broke");
    },
    info: () => {
      throw new Error("logger broke");
    },
  };
  await expect(
    assertLicenseAtStart({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: broken as never, write: () => {} }),
  ).rejects.toThrow("logger broke");
});
