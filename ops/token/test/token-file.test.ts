import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTokenFile, type TokenError, type TokenSet, writeTokenFile } from "../index.ts";

const dir = mkdtempSync(join(tmpdir(), "token-file-"));
const set: TokenSet = { access_token: "a.b.c", refresh_token: "r.s.t", expires_at: 1_900_000_000 };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileError(run: () => unknown): TokenError {
  try {
    run();
  } catch (error) {
    return error as TokenError;
  }
  throw new Error("expected the call to fail");
}

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
