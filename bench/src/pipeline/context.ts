import type { StackEnv } from "@svc/testkit";
import { BenchError } from "../errors.ts";
import type { BenchTopics } from "../kafka-topics.ts";
import type { ProgressLine } from "../progress-line.ts";
import type { PeerTools } from "../tools.ts";
import type { BenchArgs } from "./args.ts";
import type { IndexReader } from "./index-reader.ts";

/** What every section of one bench run shares: one broker, one record file, one run name for every resource. */
export interface BenchContext {
  args: BenchArgs;
  stack: StackEnv;
  /** The stack's state directory (its servers' pid files: `cpu-budget.ts`). */
  stateDir: string;
  brokers: string;
  /** Random per run: the prefix of every topic, group, key prefix and index schema it makes. */
  run: string;
  dir: string;
  topics: BenchTopics;
  progress: ProgressLine;
  /** The throughput rows' input: `args.records` records, written once, shipped by every tool. */
  file: string;
  fileBytes: number;
  tools: PeerTools | undefined;
  /** Index schemas to drop at the end. */
  indexes: IndexReader[];
  /** A name for a new resource of this run (`<run>-<what>`). */
  name(what: string): string;
}

/** Polls `count` until it reaches `target`, with the progress line showing count and rate. Returns the elapsed ms. */
export async function waitForCount(
  ctx: Pick<BenchContext, "progress">,
  what: string,
  count: () => Promise<number>,
  target: number,
  options: {
    startedAt: number;
    timeoutMs?: number;
    /** Fails sooner when the count has not moved for this long once it started (a stall, not a slow run). */
    stalledMs?: number;
    intervalMs?: number;
    abort?: () => Error | undefined;
  },
): Promise<number> {
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  let last = 0;
  let movedAt = Date.now();
  for (;;) {
    const failure = options.abort?.();
    if (failure) throw failure;
    let n = 0;
    try {
      n = await count();
    } catch {
      n = 0; // the index schema or topic is not there yet
    }
    const elapsed = performance.now() - options.startedAt;
    if (n >= target) return elapsed;
    ctx.progress.update(
      `${what}: ${n.toLocaleString("en-US")}/${target.toLocaleString("en-US")} after ${(elapsed / 1000).toFixed(1)} s`,
    );
    if (n !== last) {
      last = n;
      movedAt = Date.now();
    }
    const seconds = Math.round(elapsed / 1000);
    if (options.stalledMs !== undefined && n > 0 && Date.now() - movedAt > options.stalledMs) {
      const still = Math.round((Date.now() - movedAt) / 1000);
      throw new BenchError("BENCH_TIMEOUT", `${what}: stuck at ${n} of ${target} for ${still} s (after ${seconds} s)`, {
        subject: what,
      });
    }
    if (Date.now() > deadline) {
      throw new BenchError("BENCH_TIMEOUT", `${what}: only ${n} of ${target} after ${seconds} s`, { subject: what });
    }
    await Bun.sleep(options.intervalMs ?? 25);
  }
}
