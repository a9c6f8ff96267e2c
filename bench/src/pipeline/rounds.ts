import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext } from "./context.ts";
import { ratePerSecond } from "./percentiles.ts";
import { type ShipFigures, THROUGHPUT_MEASURES, type ThroughputRound } from "./results.ts";

const rate = (f: ShipFigures) => ratePerSecond(f.records, f.ms);

/**
 * Each measure's median round by records per second (of an even count, the lower of the middle two), with its RSS
 * and CPU: what the table shows. A measure no round has is left out.
 */
export function medianRound(rounds: readonly ThroughputRound[]): ThroughputRound {
  const median: ThroughputRound = {};
  for (const measure of THROUGHPUT_MEASURES) {
    const figures = rounds.flatMap((round) => (round[measure] ? [round[measure]] : []));
    if (figures.length === 0) continue;
    const sorted = [...figures].sort((a, b) => rate(a) - rate(b));
    Object.assign(median, { [measure]: sorted[Math.floor((sorted.length - 1) / 2)] });
  }
  return median;
}

/**
 * The median over the rounds of `ours`'s rate ÷ `peer`'s rate in the same round (of an even count, the lower middle
 * one), from the rounds that have both; undefined from none. The ratio goals are judged on it: the machine's speed
 * drifts between rounds (kcat -P 2.0–2.9 s for the same million records within minutes), and a round's two runs,
 * a few seconds apart, share their stretch of it, which a median of each side taken apart does not.
 */
export function pairedRatio(
  rounds: readonly ThroughputRound[],
  ours: keyof ThroughputRound,
  peer: keyof ThroughputRound,
): number | undefined {
  const ratios = rounds
    .flatMap((round) => {
      const [a, b] = [round[ours], round[peer]];
      return a && b ? [rate(a) / rate(b)] : [];
    })
    .sort((x, y) => x - y);
  return ratios.length === 0 ? undefined : ratios[Math.floor((ratios.length - 1) / 2)];
}

/** The lowest and highest value of `pick` over the rounds that have `measure`; undefined with fewer than two. */
export function roundRange<M extends keyof ThroughputRound>(
  rounds: readonly ThroughputRound[],
  measure: M,
  pick: (figures: NonNullable<ThroughputRound[M]>) => number | undefined,
): [number, number] | undefined {
  const values = rounds.flatMap((round) => {
    const figures = round[measure];
    const value = figures === undefined ? undefined : pick(figures as NonNullable<ThroughputRound[M]>);
    return value === undefined ? [] : [value];
  });
  if (values.length < 2) return undefined;
  return [Math.min(...values), Math.max(...values)];
}

/**
 * The context of round `round` (from 1): its own directory (the agent's checkpoint, rsyslog's imfile state, kcat's
 * output would otherwise carry over) and, past the first, its own resource names (topics, groups, index schemas).
 */
export function roundContext(ctx: BenchContext, round: number): BenchContext {
  const dir = join(ctx.dir, `round-${round}`);
  mkdirSync(dir, { recursive: true });
  return { ...ctx, dir, name: (what) => ctx.name(round === 1 ? what : `${what}-r${round}`) };
}
