import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`; 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, all threads) a live process has used so far, in ms, from `/proc/<pid>/stat`;
 * undefined once it is gone. Resolution: one clock tick (10 ms).
 */
export function readCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Fields after the command name (in parentheses, which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}
