import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { TokenError } from "./errors.ts";
import { type TokenSet, TokenSetSchema } from "./token-set.ts";

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** Refuses a target that others can use: an existing file with group/other bits, or a shared unsticky directory. */
export function assertSafeTarget(path: string): void {
  const existing = statSync(path, { throwIfNoEntry: false });
  if (existing && (existing.mode & 0o077) !== 0) {
    throw new TokenError(
      "TOKEN_FILE_INSECURE",
      `${path} exists with mode ${octal(existing.mode)}: other users may have read a token from it`,
      { advice: `remove it (or chmod 600 it if nobody else could have read it) and write the token again` },
    );
  }
  if (existing && !existing.isFile()) {
    throw new TokenError("TOKEN_FILE_INSECURE", `${path} exists and is not a regular file`);
  }
  const dir = statSync(dirname(path), { throwIfNoEntry: false });
  if (dir && (dir.mode & 0o002) !== 0 && (dir.mode & 0o1000) === 0) {
    throw new TokenError(
      "TOKEN_FILE_INSECURE",
      `${dirname(path)} is world-writable without the sticky bit: another user could replace the token file`,
      { advice: "write the token file into a directory only you can write to" },
    );
  }
}

/**
 * Writes a token file with owner-only permission (0600, spec "Refresh"): a new file in the same directory, created
 * 0600, then renamed over the target, so the token is never readable by others, not even for a moment.
 */
export function writeTokenFile(path: string, set: TokenSet): void {
  assertSafeTarget(path);
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temporary, "wx", 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, `${JSON.stringify(set, null, 2)}\n`);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
}

/** Reads a token file written by `writeTokenFile`. */
export function readTokenFile(path: string): TokenSet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new TokenError(
      "TOKEN_FILE_INVALID",
      `cannot read token file ${path}: ${String(error)}`,
      {},
      { cause: error },
    );
  }
  const first = Value.Errors(TokenSetSchema, parsed).First();
  if (first) throw new TokenError("TOKEN_FILE_INVALID", `token file ${path}${first.path}: ${first.message}`);
  return parsed as TokenSet;
}
