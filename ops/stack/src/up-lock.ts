import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning, parsePidRecord } from "./daemon.ts";
import { StackError } from "./errors.ts";
import { startTimeOf } from "./proc-process.ts";

export const upLockPath = (stateDir: string) => join(stateDir, "up.lock");

const ATTEMPTS = 3;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Result of one try at a pid lock: ours (with its release), or held by a live process. */
export type PidLockAttempt = { release: () => void } | { holderPid: number };

/**
 * One try at a pid lock: the file, created exclusively, holding this process's pid and start time (the same format
 * as a pid file). A lock whose process has exited, or whose pid now names another process, is stale and taken over;
 * a live one is reported with its pid. The release deletes the file only while it is still ours.
 */
export function tryPidLock(file: string): PidLockAttempt {
  const mine = `${process.pid}\n${startTimeOf(process.pid) ?? ""}\n`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      writeFileSync(file, mine, { flag: "wx", mode: 0o600 });
      return {
        release: () => {
          if (readText(file) === mine) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
    const seen = readText(file);
    if (seen === undefined) continue; // released meanwhile
    const holder = parsePidRecord(seen);
    if (holder !== undefined && isRunning(holder)) return { holderPid: holder.pid };
    removeStaleLock(file, seen);
  }
  throw new StackError("STACK_LOCKED", `could not take ${file}: other processes keep replacing it`, file);
}

/**
 * Takes the state directory's `up` lock (`up.lock`, see tryPidLock); a live holder fails with STACK_LOCKED naming
 * its pid. Returns the release.
 */
export function acquireUpLock(stateDir: string): () => void {
  const file = upLockPath(stateDir);
  const attempt = tryPidLock(file);
  if ("release" in attempt) return attempt.release;
  throw new StackError(
    "STACK_LOCKED",
    `another \`up\` (pid ${attempt.holderPid}) holds ${file}; wait for it to finish, or stop that process`,
    file,
  );
}

/**
 * Removes the stale lock whose content was `seen`. It is moved aside first (rename is atomic: of two takers only one
 * moves a given file) and checked: if another taker replaced it with its own lock between our read and the move,
 * that lock is put back (unless a third one was written meanwhile), and the next attempt reports it as held.
 */
export function removeStaleLock(file: string, seen: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return; // another taker moved it first
    throw error;
  }
  if (readText(aside) !== seen) {
    try {
      linkSync(aside, file);
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
  }
  rmSync(aside, { force: true });
}
