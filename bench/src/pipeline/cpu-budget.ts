import { readFileSync } from "node:fs";
import { livePid, serverPidFile, treeCpuMs } from "@svc/stack";

/**
 * Where the machine's CPU goes while a section runs: the stack's servers that the pipeline drives (each one's
 * process and its descendants, so PostgreSQL's backends count with it) and the machine as a whole. With our
 * services' own CPU beside it, the end-to-end row's limit is read off, not guessed: the machine's CPUs divided by
 * the CPU one event costs everywhere is the rate it could reach if nothing else waited.
 */
export const BUDGET_SERVERS = ["kafka", "postgres", "minio"] as const;
export type BudgetServer = (typeof BUDGET_SERVERS)[number];

/**
 * Busy and total CPU time of every CPU so far, in ms (`/proc/stat`'s first line, USER_HZ ticks of 10 ms). Busy is
 * user, nice, system, irq and softirq (guest time is already inside user and nice); the total adds idle, iowait and
 * steal (time the hypervisor gave to another machine: not ours, so not busy).
 */
export function machineCpuMs(): { busy: number; total: number } {
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = (
    readFileSync("/proc/stat", "latin1").split("\n", 1)[0] ?? ""
  )
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy: busy * 10, total: (busy + idle + iowait + steal) * 10 };
}

/** CPU ms over the interval: each server (undefined when its pid file names no live process) and the machine's. */
export interface CpuSpent {
  servers: Partial<Record<BudgetServer, number>>;
  machineBusyMs: number;
}

/** CPU ms over a run: our services' (by name), the stack's servers' and the whole machine's. */
export interface CpuBudget extends CpuSpent {
  ours: Partial<Record<OurService, number>>;
}
export type OurService = "agent" | "consumer";

export interface CpuMeter {
  /** What was spent since the meter started, with our services' CPU over the same run (undefined: not read). */
  spent(ours: Partial<Record<OurService, number | undefined>>): CpuBudget;
}

/** Starts counting the servers' and the machine's CPU; `stateDir` is the stack's (where its pid files are). */
export function startCpuMeter(stateDir: string): CpuMeter {
  const servers: BudgetServer[] = [];
  const pids: number[] = [];
  for (const server of BUDGET_SERVERS) {
    const pid = livePid(serverPidFile(stateDir, server));
    if (pid === undefined) continue;
    servers.push(server);
    pids.push(pid);
  }
  const before = treeCpuMs(pids);
  const machineBefore = machineCpuMs().busy;
  return {
    spent(ours) {
      const now = treeCpuMs(pids);
      const spent: Partial<Record<BudgetServer, number>> = {};
      servers.forEach((server, i) => {
        spent[server] = (now[i] as number) - (before[i] as number);
      });
      const read: Partial<Record<OurService, number>> = {};
      for (const [name, ms] of Object.entries(ours) as [OurService, number | undefined][]) {
        if (ms !== undefined) read[name] = ms;
      }
      return { ours: read, servers: spent, machineBusyMs: machineCpuMs().busy - machineBefore };
    },
  };
}
