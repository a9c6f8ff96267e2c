import { afterAll, expect, test } from "bun:test";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { readTokenFile, TokenError, type TokenSet, writeTokenFile } from "../index.ts";

const dir = mkdtempSync(join(tmpdir(), "token-file-"));
const set: TokenSet = { access_token: "a.b.c", refresh_token: "r.s.t", expires_at: 1_900_000_000 };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fileError = (run: () => unknown) => thrownBy(run, TokenError);

test("a new token file is written with mode 0600 and reads back", () => {
  const path = join(dir, "new.json");
  writeTokenFile(path, set);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(readTokenFile(path)).toEqual(set);
});

test("an existing 0600 token file is replaced and stays 0600", () => {
  const path = join(dir, "existing.json");
  writeFileSync(path, "{}", { mode: 0o600 });
  writeTokenFile(path, { ...set, access_token: "x.y.z" });
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(readTokenFile(path).access_token).toBe("x.y.z");
});

test("a pre-existing 0644 target is refused with TOKEN_FILE_INSECURE and left unchanged", () => {
  const path = join(dir, "readable.json");
  writeFileSync(path, "old content");
  chmodSync(path, 0o644);
  const error = fileError(() => writeTokenFile(path, set));
  expect(error.code).toBe("TOKEN_FILE_INSECURE");
  expect(readFileSync(path, "utf8")).toBe("old content");
  expect(statSync(path).mode & 0o777).toBe(0o644);
});

test("a world-writable directory without the sticky bit is refused; with it the file is written", () => {
  const open = join(dir, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  expect(fileError(() => writeTokenFile(join(open, "t.json"), set)).code).toBe("TOKEN_FILE_INSECURE");
  chmodSync(open, 0o1777);
  writeTokenFile(join(open, "t.json"), set);
  expect(statSync(join(open, "t.json")).mode & 0o777).toBe(0o600);
});

test("a missing or malformed token file fails with TOKEN_FILE_INVALID", () => {
  expect(fileError(() => readTokenFile(join(dir, "absent.json"))).code).toBe("TOKEN_FILE_INVALID");
  const path = join(dir, "bad.json");
  writeFileSync(path, JSON.stringify({ refresh_token: "r" }), { mode: 0o600 });
  expect(fileError(() => readTokenFile(path)).code).toBe("TOKEN_FILE_INVALID");
});

test("a group-writable directory without the sticky bit is refused like a world-writable one", () => {
  const shared = join(dir, "group");
  mkdirSync(shared);
  chmodSync(shared, 0o770);
  expect(fileError(() => writeTokenFile(join(shared, "t.json"), set)).code).toBe("TOKEN_FILE_INSECURE");
  expect(readdirSync(shared)).toEqual([]);
  chmodSync(shared, 0o1770);
  writeTokenFile(join(shared, "t.json"), set);
  expect(readTokenFile(join(shared, "t.json"))).toEqual(set);
});

test("a directory as the target is refused as TOKEN_FILE_INVALID (not a token file), whatever its mode", () => {
  for (const mode of [0o755, 0o700]) {
    const target = join(dir, `target-dir-${mode.toString(8)}`);
    mkdirSync(target);
    chmodSync(target, mode);
    expect(fileError(() => writeTokenFile(target, set)).code).toBe("TOKEN_FILE_INVALID");
    expect(statSync(target).isDirectory()).toBe(true);
  }
});

test("a symbolic link as the target is refused and left as it is (the rename would replace the link)", () => {
  const real = join(dir, "real.json");
  writeFileSync(real, "{}", { mode: 0o600 });
  const link = join(dir, "link.json");
  symlinkSync(real, link);
  expect(fileError(() => writeTokenFile(link, set)).code).toBe("TOKEN_FILE_INVALID");
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readlinkSync(link)).toBe(real);
  expect(readFileSync(real, "utf8")).toBe("{}");
});

test("when the rename fails, the temporary file is removed", () => {
  const own = join(dir, "rename-fails");
  mkdirSync(own, { mode: 0o700 });
  // A trailing slash names a directory: rename(file, "<path>/") fails with ENOTDIR after the temporary file exists.
  const error = thrownBy(() => writeTokenFile(`${join(own, "t.json")}/`, set), Error);
  expect((error as NodeJS.ErrnoException).code).toBe("ENOTDIR");
  expect(readdirSync(own)).toEqual([]);
});

test.each(["640", "604", "660"])(
  "a token file others may read (mode %s) is refused with TOKEN_FILE_INSECURE",
  (mode) => {
    const path = join(dir, `shared-${mode}.json`);
    writeFileSync(path, JSON.stringify(set));
    chmodSync(path, Number.parseInt(mode, 8));
    const error = fileError(() => readTokenFile(path));
    expect(error.code).toBe("TOKEN_FILE_INSECURE");
    expect(error.advice).toBeDefined();
  },
);

test("a directory given as the token file to read fails with TOKEN_FILE_INVALID", () => {
  expect(fileError(() => readTokenFile(dir)).code).toBe("TOKEN_FILE_INVALID");
});
