import { readdirSync, readFileSync } from "node:fs";

/**
 * What Linux's /proc says about one process. Every reader returns undefined when the process is gone or its
 * files cannot be read (another user's process, or no /proc at all), and callers decide what that means.
 */

/** The fields of /proc/<pid>/stat that follow the command name (which may itself hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of stat's utime and stime (`getconf CLK_TCK`; 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, every thread) the process has used so far, in ms (stat fields 14 and 15); 10 ms steps. */
export function cpuMsOf(pid: number): number | undefined {
  const fields = statFields(pid);
  const utime = Number(fields?.[11]);
  const stime = Number(fields?.[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

/**
 * CPU time (user + system, every thread) of each of `roots` and every descendant, in ms, from one read of /proc: a
 * server and the children it forked. By parent, not by process group: PostgreSQL's backends each lead a session of
 * their own. A descendant that exited counts too once its parent reaped it (stat's cutime and cstime, which a
 * parent gains from each child it waited for): PostgreSQL's backends and autovacuum workers come and go within a
 * bench's section, and a count of the living alone moved their CPU out of the server's share at random.
 */
export function treeCpuMs(roots: readonly number[]): number[] {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const fields = statFields(pid);
    if (fields === undefined) continue;
    parents.set(pid, Number(fields[1]));
    // utime, stime, then cutime and cstime (fields 14–17): its own CPU and its reaped children's.
    ticks.set(pid, Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
  }
  const totals = roots.map(() => 0);
  for (const [pid, used] of ticks) {
    if (!Number.isFinite(used)) continue;
    // Up the parent chain to a root or to init; a chain is short (a server, its children, theirs).
    for (let at: number | undefined = pid; at !== undefined && at > 0; at = parents.get(at)) {
      const root = roots.indexOf(at);
      if (root >= 0) {
        totals[root] = (totals[root] as number) + used;
        break;
      }
    }
  }
  return totals.map((total) => (total * 1000) / TICKS_PER_SECOND);
}

/** The process group (stat field 5): a server and the children it forks share the group of the pid we spawned. */
export function processGroupOf(pid: number): number | undefined {
  const group = Number(statFields(pid)?.[2]);
  return Number.isInteger(group) ? group : undefined;
}

/**
 * When the process started, in clock ticks since boot (stat field 22). With the pid it names one process for
 * good: a pid that a new process has reused has another start time.
 */
export function startTimeOf(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** A zombie has exited; only its parent's reaping is missing. */
export function isZombie(pid: number): boolean {
  return statFields(pid)?.[0] === "Z";
}

/** The command line, arguments joined by spaces, clipped to `max` characters (a JVM's can be very long). */
export function commandLineOf(pid: number, max = 240): string | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return undefined;
  }
  const text = raw
    .split("\0")
    .filter((part) => part !== "")
    .join(" ");
  if (text === "") return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
