import { SQL } from "bun";
import { machineCpuMs } from "./cpu-budget.ts";

/** How long `settle` waited before a timed section, and how idle the CPUs were at the end. */
export interface Settled {
  ms: number;
  /** CPU idle over the last window, 0–1. */
  idle: number;
}

const WINDOW_MS = 500;
const IDLE_ENOUGH = 0.85;

/**
 * Before a timed section: PostgreSQL writes its dirty buffers out (`CHECKPOINT`), the kernel its dirty pages (`sync`),
 * then the machine is waited on until its CPUs are ≥ 85 % idle over half a second (at most `timeoutMs`), so a section
 * does not pay for the one before it. Measured 2026-11-26 without it, three rounds in a row of the same 1M records:
 * the consumer took 13.1, 15.8 and 17.7 s and the agent 2.4, 2.9 and 3.6 s (CPU 2.40, 2.92, 3.30 s), while kcat, which
 * leaves nothing to write back, did not slow. With it (before the agent and the consumer only, that run): the
 * consumer 16.4, 13.1, 13.4 s and the agent 3.8, 2.7, 2.5 s — the slow first round came right after another run's
 * cleanup (topics and schemas dropped), which the idle wait does not see. Every tool's section settles alike.
 */
export async function settle(pgUrl: string, timeoutMs = 30_000): Promise<Settled> {
  const started = performance.now();
  const sql = new SQL({ url: pgUrl, max: 1 });
  try {
    await sql`CHECKPOINT`;
  } finally {
    await sql.close();
  }
  Bun.spawnSync(["sync"]);
  let idle = 0;
  do {
    const before = machineCpuMs();
    await Bun.sleep(WINDOW_MS);
    const after = machineCpuMs();
    const total = after.total - before.total;
    idle = total > 0 ? 1 - (after.busy - before.busy) / total : 1;
  } while (idle < IDLE_ENOUGH && performance.now() - started < timeoutMs);
  return { ms: performance.now() - started, idle };
}

/** `settle` with the progress line saying what it waits for. */
export async function settleFor(
  ctx: { stack: { postgresUrl: string }; progress: { update(text: string): void } },
  before: string,
): Promise<Settled> {
  ctx.progress.update(`settling before ${before} (CHECKPOINT, sync, idle CPUs)`);
  return settle(ctx.stack.postgresUrl);
}
