import { BUDGET_SERVERS, type BudgetServer, type CpuBudget, type OurService } from "./cpu-budget.ts";
import { ratePerSecond } from "./percentiles.ts";
import type { BenchResults, ShipFigures, ThroughputRound } from "./results.ts";
import { pairedRatio, roundRange } from "./rounds.ts";
import { type BenchRow, type Figure, within } from "./table.ts";

const MiB = 1024 * 1024;
type Measure = keyof ThroughputRound;

const perSecond = (f: ShipFigures) => ratePerSecond(f.records, f.ms);
const megabytes = (f: ShipFigures) => ratePerSecond(f.bytes, f.ms) / 1e6;
/** Bytes of a peak RSS in MiB; 0 (not sampled) is no figure. */
const mib = (bytes: number | undefined) => (bytes === undefined || bytes === 0 ? undefined : bytes / MiB);
const peakMiB = (f: ShipFigures) => mib(f.peakRss);
const cpuMicros = (f: ShipFigures) =>
  f.cpuMs === undefined || f.records === 0 ? undefined : (f.cpuMs * 1000) / f.records;

const rss = (bytes: number | undefined): Figure | undefined => {
  const value = mib(bytes);
  return value === undefined ? undefined : { value, unit: "MiB" };
};
const ms = (value: number | undefined): Figure | undefined => (value === undefined ? undefined : { value, unit: "ms" });

/**
 * Whether a peak RSS (bytes) is within a goal the issue gives in MB (10^6 bytes): 80 MB is 76.3 MiB, 256 MB 244.1
 * MiB. Until 2026-11-27 the MiB figure itself was compared with the goal's number, which passed 244–256 MiB.
 */
const withinMegabytes = (bytes: number | undefined, megabytesGoal: number): boolean | undefined =>
  bytes === undefined || bytes === 0 ? undefined : bytes <= megabytesGoal * 1e6;

/** Ms of CPU over `records` records (or events), in µs each. */
const microsEach = (cpuMs: number | undefined, records: number) =>
  cpuMs === undefined || records === 0 ? undefined : (cpuMs * 1000) / records;

/** The events per second `cpus` CPUs could carry if each event took `busyMs / records` of CPU and nothing waited. */
function cpuCeiling(busyMs: number | undefined, records: number, cpus: number): number | undefined {
  const micros = microsEach(busyMs, records);
  return micros === undefined || micros <= 0 ? undefined : (cpus * 1e6) / micros;
}

/**
 * The rest: the machine's busy CPU that none of the named processes used (the other servers, the bench, the OS);
 * undefined when a server's figure is missing.
 */
function restOfMachine(budget: CpuBudget | undefined): number | undefined {
  if (budget === undefined) return undefined;
  const servers = BUDGET_SERVERS.map((server) => budget.servers[server]);
  if (servers.some((part) => part === undefined)) return undefined;
  const named = [...Object.values(budget.ours), ...servers] as number[];
  return budget.machineBusyMs - named.reduce((sum, part) => sum + part, 0);
}

const OUR_SERVICES: readonly OurService[] = ["agent", "consumer"];
/** One figure of a budget, in CPU ms. */
type BudgetPart = (budget: CpuBudget | undefined) => number | undefined;
const SERVER_LABELS: Record<BudgetServer, string> = { kafka: "Kafka broker", postgres: "PostgreSQL", minio: "MinIO" };

function both(a: boolean | undefined, b: boolean | undefined): boolean | undefined {
  if (a === undefined || b === undefined) return a === false || b === false ? false : undefined;
  return a && b;
}

/** The table of one run: our figures beside kcat's and rsyslog's, each with the issue's goal (issue 7, Goals). */
export function benchRows(results: BenchResults): BenchRow[] {
  const rows: BenchRow[] = [];
  // A throughput figure: the median round's (results' own fields), with the range over every round beside it.
  const figure = <M extends Measure>(
    measure: M,
    pick: (f: NonNullable<ThroughputRound[M]>) => number | undefined,
    unit: string,
  ): Figure | undefined => {
    const median = results[measure];
    const value = median === undefined ? undefined : pick(median as NonNullable<ThroughputRound[M]>);
    if (value === undefined) return undefined;
    const range = roundRange(results.rounds, measure, pick);
    return range ? { value, unit, range } : { value, unit };
  };

  // Where a section's CPU went, per record (`cpu-budget.ts`): what limits its rate, measured. Our services' rows
  // only for those the section ran.
  const cpus = results.workload.machine.cpus;
  const budgetRows = (section: string, measure: "consumer" | "endToEnd", noun: string, short: string) => {
    const ran = results[measure]?.budget?.ours ?? {};
    const parts: [string, BudgetPart][] = [
      ...OUR_SERVICES.filter((name) => ran[name] !== undefined).map((name): [string, BudgetPart] => [
        name,
        (budget) => budget?.ours[name],
      ]),
      ...BUDGET_SERVERS.map((server): [string, BudgetPart] => [
        SERVER_LABELS[server],
        (budget) => budget?.servers[server],
      ]),
      ["rest of the machine", restOfMachine],
      ["whole machine", (budget) => budget?.machineBusyMs],
    ];
    for (const [label, pick] of parts) {
      rows.push({
        section,
        measure: `CPU per ${noun}, ${label}`,
        ours: figure(measure, (f) => microsEach(pick(f.budget), f.records), `µs/${short}`),
      });
    }
    rows.push({
      section,
      measure: `rate the CPU per ${noun} allows (${cpus} CPUs ÷ the machine's µs/${short})`,
      ours: figure(measure, (f) => cpuCeiling(f.budget?.machineBusyMs, f.records, cpus), `${short}/s`),
    });
  };

  // A ratio goal: the median of the rounds' own ratios (`pairedRatio`); from the figures themselves when the results
  // carry no rounds.
  const ratioOf = (ours: Measure, peer: Measure): number | undefined => {
    const paired = pairedRatio(results.rounds, ours, peer);
    if (paired !== undefined) return paired;
    const [a, b] = [results[ours], results[peer]];
    return a && b ? perSecond(a) / perSecond(b) : undefined;
  };
  const ratioMet = (ratio: number | undefined, least: number) => (ratio === undefined ? undefined : ratio >= least);
  const percent = (ratio: number | undefined) => (ratio === undefined ? "–" : `${(ratio * 100).toFixed(1)} %`);
  const roundsNote = results.rounds.length > 1 ? " (median of the rounds' own ratios)" : "";

  const agentRate = figure("agent", perSecond, "rec/s");
  const kcatPRate = figure("kcatProduce", perSecond, "rec/s");
  const rsyslogRate = figure("rsyslog", perSecond, "rec/s");
  const agentToKcat = ratioOf("agent", "kcatProduce");
  const agentToRsyslog = ratioOf("agent", "rsyslog");
  rows.push({
    section: "agent",
    measure: "file → topic",
    ours: agentRate,
    kcat: kcatPRate,
    rsyslog: rsyslogRate,
    goal: "≥ 50 % of kcat -P, ≥ rsyslog",
    met: both(ratioMet(agentToKcat, 0.5), ratioMet(agentToRsyslog, 1)),
    note:
      agentToKcat === undefined && agentToRsyslog === undefined
        ? undefined
        : `${percent(agentToKcat)} of kcat -P, ${percent(agentToRsyslog)} of rsyslog${roundsNote}`,
  });
  rows.push({
    section: "agent",
    measure: "file → topic",
    ours: figure("agent", megabytes, "MB/s"),
    kcat: figure("kcatProduce", megabytes, "MB/s"),
    rsyslog: figure("rsyslog", megabytes, "MB/s"),
  });
  rows.push({
    section: "agent",
    measure: "peak RSS, file → topic",
    ours: figure("agent", peakMiB, "MiB"),
    kcat: figure("kcatProduce", peakMiB, "MiB"),
    rsyslog: figure("rsyslog", peakMiB, "MiB"),
  });
  rows.push({
    section: "agent",
    measure: "CPU per record, file → topic",
    ours: figure("agent", cpuMicros, "µs/rec"),
    kcat: figure("kcatProduce", cpuMicros, "µs/rec"),
    rsyslog: figure("rsyslog", cpuMicros, "µs/rec"),
  });

  const consumerRate = figure("consumer", perSecond, "rec/s");
  const kcatCRate = figure("kcatConsume", perSecond, "rec/s");
  const consumerToKcat = ratioOf("consumer", "kcatConsume");
  rows.push({
    section: "consumer",
    measure: "topic → S3 + index (kcat: → file)",
    ours: consumerRate,
    kcat: kcatCRate,
    goal: "≥ 50 % of kcat -C",
    met: ratioMet(consumerToKcat, 0.5),
    note: consumerToKcat === undefined ? undefined : `${percent(consumerToKcat)} of kcat -C${roundsNote}`,
  });
  rows.push({
    section: "consumer",
    measure: "peak RSS, topic → S3",
    ours: figure("consumer", peakMiB, "MiB"),
    kcat: figure("kcatConsume", peakMiB, "MiB"),
  });
  budgetRows("consumer", "consumer", "record", "rec");

  const e2eRate = figure("endToEnd", perSecond, "ev/s");
  rows.push({
    section: "end to end",
    measure: "line written → object durable",
    ours: e2eRate,
    goal: "≥ 100,000 ev/s",
    met: within(e2eRate, 100_000, true),
  });
  const sustained = figure("endToEnd", (f) => f.sustainedPerSecond, "ev/s");
  rows.push({
    section: "end to end",
    measure: "sustained: from 10 % to 90 % of the records durable",
    ours: sustained,
    // Not judged: the goal is the whole run's, line written → durable (the row above); this part leaves out the
    // start and the tail.
    note: sustained === undefined ? undefined : "a part of the run, not judged",
  });
  rows.push({
    section: "end to end",
    measure: "line written → object durable",
    ours: figure("endToEnd", megabytes, "MB/s"),
  });
  rows.push({
    section: "end to end",
    measure: "peak RSS agent",
    ours: figure("endToEnd", (f) => mib(f.agentRss), "MiB"),
  });
  rows.push({
    section: "end to end",
    measure: "peak RSS consumer",
    ours: figure("endToEnd", (f) => mib(f.consumerRss), "MiB"),
  });
  budgetRows("end to end", "endToEnd", "event", "ev");

  const defaultAge = results.workload.batchAges[0];
  for (const run of results.latency) {
    const label = `${run.rate.toLocaleString("en-US")}/s, batch age ${run.batchMaxAgeMs / 1000} s`;
    const isGoalRate = run.rate === 10_000;
    // Records not durable when the bench stopped waiting count as infinitely late: a percentile that falls among
    // them has no value, and the row says how many there were.
    const skipped = run.skipped ?? 0;
    const late =
      run.stored < run.records
        ? `${run.records - run.stored} not durable in time` +
          (skipped > 0 ? ` (${skipped} of them deleted by Kafka's retention before they were read)` : "")
        : undefined;
    // The bench's line writer behind its schedule: the pipeline was offered less than the row's rate.
    const lag =
      run.writerMaxLagMs > 1_000
        ? `the bench's line writer lagged ${Math.round(run.writerMaxLagMs)} ms` +
          (run.achievedRate === undefined ? "" : `, ${Math.round(run.achievedRate).toLocaleString("en-US")}/s offered`)
        : undefined;
    const finite = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? undefined : value);
    rows.push({ section: "latency", measure: `p50 line → durable, ${label}`, ours: ms(finite(run.p50Ms)), note: late });
    const p99Met = isGoalRate ? (finite(run.p99Ms) === undefined ? false : within(ms(run.p99Ms), 10_000)) : undefined;
    rows.push({
      section: "latency",
      measure: `p99 line → durable, ${label}`,
      ours: ms(finite(run.p99Ms)),
      goal: isGoalRate ? "≤ 10,000 ms at 10k/s" : undefined,
      met: p99Met,
      note: [late, lag].filter((n) => n !== undefined).join(", ") || undefined,
    });
    const objects =
      run.objectsPerPartitionHour === undefined
        ? undefined
        : { value: run.objectsPerPartitionHour, unit: "obj/h", digits: 1 };
    rows.push({
      section: "objects",
      measure: `objects per partition per hour, ${label}`,
      ours: objects,
      goal: isGoalRate ? "≤ 360" : undefined,
      met: isGoalRate ? within(objects, 360) : undefined,
    });
    // The issue's goal is both at once: one batch age whose p99 and objects per hour each meet theirs.
    if (isGoalRate) {
      rows.push({
        section: "latency",
        measure: `10k/s goal, ${label}: p99 ≤ 10 s with ≤ 360 obj/h`,
        goal: "both at this batch age",
        met: both(p99Met, within(objects, 360)),
        note: `p99 ${finite(run.p99Ms) === undefined ? "unknown" : `${Math.round(run.p99Ms ?? 0)} ms`}, ${
          objects === undefined ? "objects unknown" : `${objects.value.toFixed(1)} obj/h`
        }`,
      });
    }
    if (run.batchMaxAgeMs === defaultAge || run.rate === 50_000) {
      rows.push({
        section: "memory",
        measure: `peak RSS agent, ${label}`,
        ours: rss(run.agentRss),
        goal: run.rate === 50_000 ? "≤ 80 MB (76.3 MiB) at 50k/s" : undefined,
        met: run.rate === 50_000 ? withinMegabytes(run.agentRss, 80) : undefined,
      });
      rows.push({
        section: "memory",
        measure: `peak RSS consumer, ${label}`,
        ours: rss(run.consumerRss),
        goal: run.rate === 50_000 ? "≤ 256 MB (244.1 MiB) at 50k/s" : undefined,
        met: run.rate === 50_000 ? withinMegabytes(run.consumerRss, 256) : undefined,
      });
    }
  }
  return rows.filter((row) => row.ours || row.kcat || row.rsyslog || row.note);
}
