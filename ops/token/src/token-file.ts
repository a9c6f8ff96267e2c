import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { TokenError } from "./errors.ts";
import { type TokenSet, TokenSetSchema } from "./token-set.ts";

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/**
 * Refuses a target that is not a plain file of ours: anything but a regular file (a directory; a symbolic link,
 * which the rename would replace instead of writing where it points), an existing file with group/other bits, or a
 * directory others can write to (group- or world-writable) without the sticky bit.
 */
export function assertSafeTarget(path: string): void {
  const existing = lstatSync(path, { throwIfNoEntry: false });
  if (existing && !existing.isFile()) {
    throw new TokenError("TOKEN_FILE_INVALID", `${path} exists and is ${kindOf(existing)}: give a token file path`, {
      advice: "write the token to a regular file (for a symbolic link, give the path it points to)",
    });
  }
  if (existing && (existing.mode & 0o077) !== 0) {
    throw new TokenError(
      "TOKEN_FILE_INSECURE",
      `${path} exists with mode ${octal(existing.mode)}: other users may have read a token from it`,
      { advice: `remove it (or chmod 600 it if nobody else could have read it) and write the token again` },
    );
  }
  const dir = statSync(dirname(path), { throwIfNoEntry: false });
  if (dir && (dir.mode & 0o022) !== 0 && (dir.mode & 0o1000) === 0) {
    throw new TokenError(
      "TOKEN_FILE_INSECURE",
      `${dirname(path)} has mode ${octal(dir.mode)}, writable by others without the sticky bit: another user could replace the token file`,
      { advice: "write the token file into a directory only you can write to" },
    );
  }
}

/**
 * Writes a token file with owner-only permission (0600, spec "Refresh"): a new file in the same directory, created
 * 0600, then renamed over the target, so the token is never readable by others, not even for a moment. When any
 * step fails, the temporary file is removed.
 */
export function writeTokenFile(path: string, set: TokenSet): void {
  assertSafeTarget(path);
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temporary, "wx", 0o600);
  let renamed = false;
  try {
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${JSON.stringify(set, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    renamed = true;
  } finally {
    if (!renamed) unlinkSync(temporary);
  }
}

/** Reads a token file written by `writeTokenFile`; one that others could read (group/other bits) is refused. */
export function readTokenFile(path: string): TokenSet {
  let text: string;
  try {
    const fd = openSync(path, "r");
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile()) {
        throw new TokenError("TOKEN_FILE_INVALID", `token file ${path} is ${kindOf(stats)}`);
      }
      if ((stats.mode & 0o077) !== 0) {
        throw new TokenError(
          "TOKEN_FILE_INSECURE",
          `token file ${path} has mode ${octal(stats.mode)}: other users may have read its tokens`,
          { advice: "chmod 600 it if nobody else could have read it; otherwise remove it and issue a new token" },
        );
      }
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof TokenError) throw error;
    throw new TokenError(
      "TOKEN_FILE_INVALID",
      `cannot read token file ${path}: ${String(error)}`,
      {},
      { cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new TokenError(
      "TOKEN_FILE_INVALID",
      `token file ${path} is not JSON: ${String(error)}`,
      {},
      { cause: error },
    );
  }
  const first = Value.Errors(TokenSetSchema, parsed).First();
  if (first) throw new TokenError("TOKEN_FILE_INVALID", `token file ${path}${first.path}: ${first.message}`);
  return parsed as TokenSet;
}
