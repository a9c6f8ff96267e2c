import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isAlive, waitFor } from "@svc/common";
import { StackError } from "./errors.ts";
import { isZombie, startTimeOf } from "./proc-process.ts";

export interface DaemonSpec {
  name: string;
  command: string;
  args: string[];
  /** The server's whole environment. */
  env: Record<string, string | undefined>;
  cwd?: string;
  logFile: string;
  pidFile: string;
}

export interface RunningDaemon {
  name: string;
  pid: number;
  /** Set once the process has exited (only known for daemons this process started). */
  exitError: () => Error | undefined;
}

/**
 * Starts a long-running server in its own process group, stdout and stderr appended to its log file, its pid in
 * a pid file: `down` (maybe from another process) stops the whole group through that file.
 */
export function spawnDaemon(spec: DaemonSpec): RunningDaemon {
  const log = openSync(spec.logFile, "a");
  let exited: Error | undefined;
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["ignore", log, log],
      detached: true,
    });
    if (child.pid === undefined) {
      throw new StackError("STACK_START_FAILED", `${spec.name}: could not start ${spec.command}`, spec.name);
    }
    child.once("exit", (code, signal) => {
      exited = new StackError(
        "STACK_START_FAILED",
        `${spec.name} exited (${signal ?? `code ${code}`}); last log lines:\n${tailOf(spec.logFile, 15)}`,
        spec.name,
      );
    });
    child.unref();
    // The start time beside the pid: a pid that another process reuses later (after a reboot) is not ours.
    writeFileSync(spec.pidFile, `${child.pid}\n${startTimeOf(child.pid) ?? ""}\n`);
    return { name: spec.name, pid: child.pid, exitError: () => exited };
  } finally {
    closeSync(log);
  }
}

/** A pid file's content: the pid, and the process's start time when it was known (older files lack it). */
export interface PidRecord {
  pid: number;
  startTime: string | undefined;
}

export function readPidRecord(pidFile: string): PidRecord | undefined {
  if (!existsSync(pidFile)) return undefined;
  return parsePidRecord(readFileSync(pidFile, "utf8"));
}

/** "<pid>\n<start time>\n"; the start time may be missing or empty. */
export function parsePidRecord(text: string): PidRecord | undefined {
  const [first, second] = text.split("\n");
  const pid = Number.parseInt(first?.trim() ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const startTime = second?.trim();
  return { pid, startTime: startTime === "" ? undefined : startTime };
}

export function readPid(pidFile: string): number | undefined {
  return readPidRecord(pidFile)?.pid;
}

/** Whether the recorded process still runs: alive, not a zombie, and started when the record says it did. */
export function isRunning(record: PidRecord): boolean {
  if (hasExited(record.pid)) return false;
  return record.startTime === undefined || startTimeOf(record.pid) === record.startTime;
}

/** The pid of the pid file's process while it runs; undefined when it never ran, exited, or its pid was reused. */
export function livePid(pidFile: string): number | undefined {
  const record = readPidRecord(pidFile);
  return record !== undefined && isRunning(record) ? record.pid : undefined;
}

const hasExited = (pid: number) => !isAlive(pid) || isZombie(pid);

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Stops the daemon's process group: SIGTERM, then SIGKILL after `graceMs`. Returns whether one was running. */
export async function stopDaemon(pidFile: string, graceMs = 15_000): Promise<boolean> {
  const pid = readPid(pidFile);
  if (pid === undefined) return false;
  // A reused pid belongs to someone else's process: it is not signalled, only the stale file goes.
  const wasAlive = livePid(pidFile) === pid;
  if (wasAlive) {
    signalGroup(pid, "SIGTERM");
    try {
      await waitFor("process exit", async () => (hasExited(pid) ? true : undefined), {
        timeoutMs: graceMs,
        intervalMs: 100,
      });
    } catch {
      signalGroup(pid, "SIGKILL");
      await waitFor("process kill", async () => (hasExited(pid) ? true : undefined), { timeoutMs: 5_000 });
    }
  }
  rmSync(pidFile, { force: true });
  return wasAlive;
}

/** Kills the daemon's group at once; synchronous, so it can run in a process `exit` handler. */
export function killDaemonNow(pidFile: string): void {
  const pid = livePid(pidFile);
  if (pid !== undefined) signalGroup(pid, "SIGKILL");
}

export function tailOf(file: string, lines: number): string {
  if (!existsSync(file)) return "(no log)";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}
