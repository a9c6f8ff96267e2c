import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdir, readFile, rename, rm, stat, truncate, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { rejectionOf, type TempDir, tempDir } from "@svc/testkit";
import { AUDIT_FILE_MODE, AuditEmitterError, FileTarget } from "../index.ts";

let dir: TempDir;
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

test("a file left ending part-way through a line (a write cut short, then a restart) is ended before the first line", async () => {
  await writeFile(path, '{"whole":1}\n{"id":"cut-sh');
  await target.write(line('{"next":2}'));
  await target.write(line('{"then":3}'));
  // only the fragment is lost, as one bad line; the records after it are whole
  expect(await readFile(path, "utf8")).toBe('{"whole":1}\n{"id":"cut-sh\n{"next":2}\n{"then":3}\n');
});

test("the same when a rotation hands over a file that ends part-way through a line", async () => {
  await target.write(line("1"));
  await rename(path, `${path}.1`);
  await writeFile(path, "frag");
  await target.write(line("2"));
  expect(await readFile(path, "utf8")).toBe("frag\n2\n");
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

test("a write cut short (file size limit) leaves one bad line, and the next record after the limit is lifted is whole", async () => {
  // a real partial write: under `ulimit -S -f 1` (1 KiB, soft: it can be raised again) the write that crosses the limit is cut short, then EFBIG
  const child = join(import.meta.dir, "support", "fsize-child.ts");
  const proc = Bun.spawn(["bash", "-c", `trap '' XFSZ; ulimit -S -f 1; exec "${process.execPath}" "${child}"`], {
    env: { ...process.env, SVC_AUDIT_LOG_SINK: "file", SVC_AUDIT_LOG_FILE: path, SVC_AUDIT_FAIL_MODE: "closed" },
    stdin: "pipe",
    stdout: "pipe",
  });
  const answers = (async function* () {
    let buffered = "";
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        yield buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
      }
    }
  })();
  const ask = async (resource: string) => {
    proc.stdin.write(`${resource}\n`);
    proc.stdin.flush();
    return (await answers.next()).value;
  };
  expect((await answers.next()).value).toBe("ready");
  expect(await ask("a".repeat(500))).toBe("ok");
  expect(await ask("b".repeat(500))).toBe("AUDIT_EMITTER_WRITE_FAILED");
  expect((await stat(path)).size).toBe(1024); // the second line was cut at the limit
  const lifted = Bun.spawnSync(["prlimit", `--pid=${proc.pid}`, "--fsize=unlimited:"], { stderr: "pipe" });
  expect(lifted.exitCode).toBe(0);
  expect(await ask("c".repeat(500))).toBe("ok");
  proc.stdin.write("\n");
  proc.stdin.end();
  expect(await proc.exited).toBe(0);
  const lines = (await readFile(path, "utf8")).split("\n");
  expect(lines).toHaveLength(4); // a, the fragment of b, c, and the empty string after the last newline
  expect(JSON.parse(lines[0] ?? "").resource).toBe("a".repeat(500));
  expect(() => JSON.parse(lines[1] ?? "")).toThrow();
  expect(JSON.parse(lines[2] ?? "").resource).toBe("c".repeat(500));
  expect(lines[3]).toBe("");
});

test("size rotation: before a batch would pass the size, the generations move up and a new file takes it", async () => {
  const rotating = new FileTarget(path, false, { bytes: 30, keep: 2 });
  try {
    // Lines of 10 bytes: three fit in 30, the fourth starts a new file; the oldest past `keep` is deleted.
    for (let n = 0; n < 10; n += 1) await rotating.write(line(`line-${String(n).padStart(3, "0")}`));
  } finally {
    await rotating.close();
  }
  const names = ["", ".1", ".2", ".3"];
  const contents = await Promise.all(names.map((suffix) => readFile(`${path}${suffix}`, "utf8").catch(() => null)));
  expect(contents).toEqual([
    "line-009\n",
    "line-006\nline-007\nline-008\n",
    "line-003\nline-004\nline-005\n",
    null, // line-000 … 002: the oldest generation, replaced past keep = 2
  ]);
});

test("size rotation: a batch larger than the size goes whole into a new file; an existing file's size counts", async () => {
  await writeFile(path, `${"x".repeat(20)}\n`);
  const rotating = new FileTarget(path, false, { bytes: 30, keep: 3 });
  try {
    await rotating.write(Buffer.from(`${"a".repeat(40)}\n`)); // 21 + 41 > 30: the old file moves first
    await rotating.write(line("b")); // 41 + 2 > 30: rotated again
  } finally {
    await rotating.close();
  }
  expect(await readFile(`${path}.2`, "utf8")).toBe(`${"x".repeat(20)}\n`);
  expect(await readFile(`${path}.1`, "utf8")).toBe(`${"a".repeat(40)}\n`);
  expect(await readFile(path, "utf8")).toBe("b\n");
});

test("size rotation that cannot rename: the batch goes to the current file, onRotateError hears why, the next tries again", async () => {
  const errors: Error[] = [];
  const rotating = new FileTarget(path, false, { bytes: 10, keep: 1 }, (error) => errors.push(error));
  // `<path>.1` a directory that is not empty: renaming the file over it fails.
  await mkdir(`${path}.1`);
  await writeFile(join(`${path}.1`, "in-the-way"), "");
  try {
    await rotating.write(line("line-001"));
    await rotating.write(line("line-002"));
    expect(errors.map((error) => (error as AuditEmitterError).code)).toEqual(["AUDIT_EMITTER_WRITE_FAILED"]);
    expect(errors[0]?.message).toContain("audit log rotate failed");
    expect(await readFile(path, "utf8")).toBe("line-001\nline-002\n");
    await rm(`${path}.1`, { recursive: true });
    await rotating.write(line("line-003"));
  } finally {
    await rotating.close();
  }
  expect(await readFile(`${path}.1`, "utf8")).toBe("line-001\nline-002\n");
  expect(await readFile(path, "utf8")).toBe("line-003\n");
});
