import { parseArgs } from "node:util";
import { BenchError } from "../errors.ts";

export const SECTIONS = ["peers", "agent", "consumer", "e2e", "latency"] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchArgs {
  /** Records of the throughput rows (the file every tool ships). */
  records: number;
  /** Fixed rates of the latency rows, events/s. */
  rates: number[];
  /** Seconds each fixed-rate run writes. */
  seconds: number;
  /** Batch ages of the consumer for the latency rows (ms); the first is used for every rate, the rest at 10k/s. */
  batchAges: number[];
  sections: Section[];
  /**
   * Rounds of the throughput rows (peers, agent, consumer, end to end), one after another in the same run: each row
   * shows the median round with the range beside it. One run of each varies by ±30 % on a 2-core machine (kcat -P
   * alone from 290k to 900k records/s), so a single pair is no comparison.
   */
  rounds: number;
  quick: boolean;
  json: boolean;
  /** Skip `apt-get install` of missing peers (fail instead). */
  noInstall: boolean;
}

export const USAGE = `usage: bun run bench:pipeline [--records N] [--rates 1000,10000,50000] [--seconds S]
       [--batch-ages 9000,10000,10010,10020] [--rounds 3] [--only peers,agent,consumer,e2e,latency] [--quick] [--json]
       [--no-install]`;

function positiveInteger(flag: string, text: string): number {
  const cleaned = text.replace(/_/g, "");
  const match = /^(\d+)([kKmM]?)$/.exec(cleaned);
  if (!match)
    throw new BenchError("BENCH_ARGS_INVALID", `--${flag}: expected a positive integer (got ${text})`, {
      subject: flag,
    });
  const scale = { "": 1, k: 1_000, K: 1_000, m: 1_000_000, M: 1_000_000 }[match[2] ?? ""] ?? 1;
  const value = Number(match[1]) * scale;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new BenchError("BENCH_ARGS_INVALID", `--${flag}: expected a positive integer (got ${text})`, {
      subject: flag,
    });
  }
  return value;
}

function list(values: readonly string[]): string[] {
  return values
    .flatMap((value) => value.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/**
 * The bench's flags. `--quick` shrinks the defaults (200k records, 20 s per rate, rates 1k and 10k, one round) for
 * a smoke run; an explicit flag still wins. Throws `BENCH_ARGS_INVALID` naming the flag.
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new BenchError("BENCH_ARGS_INVALID", `${(error as Error).message}\n${USAGE}`, { cause: error });
  }
  const { values } = parsed;
  const quick = values.quick === true;
  const sections = list(values.only ?? []);
  for (const section of sections) {
    if (!(SECTIONS as readonly string[]).includes(section)) {
      throw new BenchError("BENCH_ARGS_INVALID", `--only: unknown section ${section} (known: ${SECTIONS.join(", ")})`, {
        subject: "only",
      });
    }
  }
  const rates = list(values.rates ?? []).map((v) => positiveInteger("rates", v));
  const ages = list(values["batch-ages"] ?? []).map((v) => positiveInteger("batch-ages", v));
  return {
    records: values.records === undefined ? (quick ? 200_000 : 1_000_000) : positiveInteger("records", values.records),
    rates: rates.length > 0 ? rates : quick ? [1_000, 10_000] : [1_000, 10_000, 50_000],
    seconds: values.seconds === undefined ? (quick ? 20 : 60) : positiveInteger("seconds", values.seconds),
    batchAges: ages.length > 0 ? ages : [9_000, 10_000, 10_010, 10_020],
    sections: sections.length > 0 ? (sections as Section[]) : [...SECTIONS],
    rounds: values.rounds === undefined ? (quick ? 1 : 3) : positiveInteger("rounds", values.rounds),
    quick,
    json: values.json === true,
    noInstall: values["no-install"] === true,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      records: { type: "string" },
      rates: { type: "string", multiple: true },
      seconds: { type: "string" },
      "batch-ages": { type: "string", multiple: true },
      rounds: { type: "string" },
      only: { type: "string", multiple: true },
      quick: { type: "boolean" },
      json: { type: "boolean" },
      "no-install": { type: "boolean" },
    },
  });
}
