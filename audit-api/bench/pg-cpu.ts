import { cpuMsOf, livePid, serverPidFile } from "@svc/stack";
import type { SQL } from "bun";

/**
 * CPU time so far of one server of the local stack (`minio`, …), from its pid file under `SVC_STACK_STATE_DIR`,
 * in ms; undefined when the stack's state is elsewhere or the server is not running here.
 */
export function stackServerCpu(service: string): number | undefined {
  const stateDir = process.env.SVC_STACK_STATE_DIR;
  const pid = stateDir === undefined ? undefined : livePid(serverPidFile(stateDir, service));
  return pid === undefined ? undefined : cpuMsOf(pid);
}

/**
 * CPU time of the PostgreSQL backends serving this process's audit API (`application_name` `svc-audit-api:<pid>`,
 * audit-api.ts): read from `/proc/<backend pid>/stat` (the server runs on this machine), in ms. `since` subtracts
 * an earlier reading per backend; a backend opened since counts from its start.
 */
export async function apiBackendsCpu(
  sql: SQL,
  since?: Map<number, number>,
): Promise<{ ms: number; at: Map<number, number> }> {
  const rows = (await sql.unsafe("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
    `svc-audit-api:${process.pid}`,
  ])) as { pid: number }[];
  const at = new Map<number, number>();
  let ms = 0;
  for (const { pid } of rows) {
    const used = cpuMsOf(pid);
    if (used === undefined) continue; // ended meanwhile, or not on this machine
    at.set(pid, used);
    ms += used - (since?.get(pid) ?? 0);
  }
  return { ms, at };
}
