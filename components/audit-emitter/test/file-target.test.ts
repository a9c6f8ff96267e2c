import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFile, rename, rm, stat, truncate, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { rejectionOf } from "@svc/testkit";
import { AUDIT_FILE_MODE, AuditEmitterError, FileTarget } from "../index.ts";
import { tempDir } from "./support/temp-dir.ts";

let dir: Awaited<ReturnType<typeof tempDir>>;
let path: string;
let target: FileTarget;

beforeEach(async () => {
  dir = await tempDir("file");
  path = join(dir.path, "audit.jsonl");
  target = new FileTarget(path, false);
});

afterEach(async () => {
  await target.close().catch(() => undefined);
  await dir.remove();
});

const line = (text: string) => Buffer.from(`${text}\n`);

test("creates the file with mode 0640 whatever the umask, and appends", async () => {
  const before = process.umask(0o000);
  try {
    await target.write(line("a"));
  } finally {
    process.umask(before);
  }
  await target.write(line("b"));
  expect((await stat(path)).mode & 0o777).toBe(AUDIT_FILE_MODE);
  expect(await readFile(path, "utf8")).toBe("a\nb\n");
});

test("an existing file is appended to, never truncated", async () => {
  await writeFile(path, "old\n");
  await target.write(line("new"));
  expect(await readFile(path, "utf8")).toBe("old\nnew\n");
});

test("rotation by rename: lines after the rename land in a new file at the path", async () => {
  await target.write(line("1"));
  await rename(path, `${path}.1`);
  await target.write(line("2"));
  expect(await readFile(`${path}.1`, "utf8")).toBe("1\n");
  expect(await readFile(path, "utf8")).toBe("2\n");
});

test("rotation by rename + create: the file the rotator created is used", async () => {
  await target.write(line("1"));
  await rename(path, `${path}.1`);
  await writeFile(path, "", { mode: 0o640 });
  await target.write(line("2"));
  expect(await readFile(path, "utf8")).toBe("2\n");
});

test("copytruncate: after the truncate, lines land at the new end (O_APPEND), with no hole", async () => {
  await target.write(line("1"));
  await target.write(line("2"));
  await truncate(path, 0);
  await target.write(line("3"));
  expect(await readFile(path, "utf8")).toBe("3\n");
});

test("the file deleted: it is created again", async () => {
  await target.write(line("1"));
  await unlink(path);
  await target.write(line("2"));
  expect(await readFile(path, "utf8")).toBe("2\n");
});

test("requestReopen() reopens by path without losing or reordering a line", async () => {
  await target.write(line("1"));
  target.requestReopen();
  await target.write(line("2"));
  expect(await readFile(path, "utf8")).toBe("1\n2\n");
});

test("the directory removed: the write fails with AUDIT_EMITTER_WRITE_FAILED naming the path", async () => {
  await target.write(line("1"));
  await rm(dir.path, { recursive: true });
  const error = await rejectionOf(target.write(line("2")), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_WRITE_FAILED");
  expect(error.subject).toBe(path);
  expect(error.canRetry).toBe(true);
});
