import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSecretSetting, SvcError } from "../index.ts";

const dir = mkdtempSync(join(tmpdir(), "secret-setting-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

class TestConfigError extends SvcError<"TEST_CONFIG_INVALID"> {}
const makeError = (variable: string, message: string, cause?: unknown) =>
  new TestConfigError("TEST_CONFIG_INVALID", `${variable}: ${message}`, { subject: variable, cause });

const read = (env: Record<string, string | undefined>, options = {}) =>
  readSecretSetting(env, "X_SECRET", makeError, options);

function refused(env: Record<string, string | undefined>, options = {}): TestConfigError {
  try {
    read(env, options);
  } catch (error) {
    expect(error).toBeInstanceOf(TestConfigError);
    expect((error as TestConfigError).code).toBe("TEST_CONFIG_INVALID");
    return error as TestConfigError;
  }
  throw new Error("expected a refusal");
}

test("the value of the variable, as given", () => {
  expect(read({ X_SECRET: " s3cret " })).toBe(" s3cret ");
});

test("the file's content, its last line ending (\\n or \\r\\n) dropped; the path may be padded", () => {
  expect(read({ X_SECRET_FILE: secretFile("plain", "from-file") })).toBe("from-file");
  expect(read({ X_SECRET_FILE: secretFile("lf", "from-file\n") })).toBe("from-file");
  expect(read({ X_SECRET_FILE: ` ${secretFile("crlf", "from-file\r\n")} ` })).toBe("from-file");
});

test("a file ending in a further line break is refused, naming the file variable", () => {
  for (const content of ["x\n\n", "x\r\n\r\n", "x\r"]) {
    const error = refused({ X_SECRET_FILE: secretFile(`more-${content.length}`, content) });
    expect(error.subject).toBe("X_SECRET_FILE");
    expect(error.message).toContain("line break");
    expect(error.message).not.toContain("x\n");
  }
});

test("neither (or only blank values) names the variable and the file variable", () => {
  for (const env of [{}, { X_SECRET: "" }, { X_SECRET: "  ", X_SECRET_FILE: " " }]) {
    const error = refused(env, { what: "the test's secret" });
    expect(error.subject).toBe("X_SECRET");
    expect(error.message).toContain("X_SECRET_FILE");
    expect(error.message).toContain("the test's secret");
  }
});

test("both: names the variable, or the file variable when asked; the secret is not in the message", () => {
  const env = { X_SECRET: "do-not-show", X_SECRET_FILE: secretFile("both", "x") };
  const byValue = refused(env);
  expect(byValue.subject).toBe("X_SECRET");
  expect(byValue.message).not.toContain("do-not-show");
  expect(byValue.message).toContain("not both");
  expect(refused(env, { bothNames: "file" }).subject).toBe("X_SECRET_FILE");
});

test("an empty or blank file names the file variable", () => {
  for (const content of ["", "\n", "  \n", "\r\n"]) {
    const error = refused({ X_SECRET_FILE: secretFile(`empty-${JSON.stringify(content).length}`, content) });
    expect(error.subject).toBe("X_SECRET_FILE");
    expect(error.message).toContain("empty");
  }
});

test("a missing, unreadable or directory path names the file variable, the reason and carries the cause", () => {
  const missing = refused({ X_SECRET_FILE: join(dir, "absent") });
  expect(missing.subject).toBe("X_SECRET_FILE");
  expect(missing.message).toContain("ENOENT");
  expect((missing.cause as NodeJS.ErrnoException).code).toBe("ENOENT");
  expect(refused({ X_SECRET_FILE: dir }).message).toContain("EISDIR");
  if (process.getuid?.() !== 0) {
    const locked = secretFile("locked", "x");
    chmodSync(locked, 0o000);
    expect(refused({ X_SECRET_FILE: locked }).message).toContain("EACCES");
  }
});

test("check: its message names the variable the secret came from, never the secret", () => {
  const check = (secret: string) => (secret.length < 12 ? "must be at least 12 characters" : undefined);
  const fromValue = refused({ X_SECRET: "short-value" }, { check });
  expect(fromValue.subject).toBe("X_SECRET");
  expect(fromValue.message).not.toContain("short-value");
  const fromFile = refused({ X_SECRET_FILE: secretFile("short", "short-file\n") }, { check });
  expect(fromFile.subject).toBe("X_SECRET_FILE");
  expect(fromFile.message).not.toContain("short-file");
  expect(read({ X_SECRET_FILE: secretFile("long", "long-enough-secret\n") }, { check })).toBe("long-enough-secret");
});
