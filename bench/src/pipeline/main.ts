import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { exitAfterCleanup } from "@svc/common";
import { defaultStateDir } from "@svc/stack";
import { randomName, stackEnv } from "@svc/testkit";
import { BenchTopics } from "../kafka-topics.ts";
import { ProgressLine } from "../progress-line.ts";
import { killAllTracked } from "../spawn-tracked.ts";
import { ensurePeers } from "../tools.ts";
import { runAgentAlone } from "./agent-section.ts";
import { parseBenchArgs, type Section } from "./args.ts";
import { runConsumerAlone } from "./consumer-section.ts";
import type { BenchContext } from "./context.ts";
import { checkDiskRoom, diskNeeds } from "./disk-room.ts";
import { runEndToEnd } from "./end-to-end-section.ts";
import { RECORD_BYTES } from "./generate-records.ts";
import { runLatencies } from "./latency-section.ts";
import { runPeers } from "./peers-section.ts";
import { writeRecordFile } from "./record-file.ts";
import type { BenchResults, ThroughputRound } from "./results.ts";
import { medianRound, roundContext } from "./rounds.ts";
import { benchRows } from "./rows.ts";
import { benchEnv, servicesPresent } from "./services.ts";
import { renderTable } from "./table.ts";

// bun run bench:pipeline [--records N] [--rates 1000,10000,50000] [--seconds S] [--rounds N] [--only <section>]
//   [--quick] [--json]
let args: ReturnType<typeof parseBenchArgs>;
try {
  args = parseBenchArgs(Bun.argv.slice(2));
  // Checked now, not at the first spawn minutes into the run.
  benchEnv("SVC_BENCH_AGENT_ENV");
  benchEnv("SVC_BENCH_CONSUMER_ENV");
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
const stack = stackEnv();
const progress = new ProgressLine();
const wants = (section: Section) => args.sections.includes(section);
const present = servicesPresent();

const run = randomName("bench");
const stateDir = defaultStateDir(process.env);
try {
  checkDiskRoom(diskNeeds(args), tmpdir(), stateDir);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), `${run}-`));
const topics = new BenchTopics(stack.kafkaBrokers);
const results: BenchResults = {
  startedAt: new Date().toISOString(),
  workload: {
    records: args.records,
    bytes: 0,
    recordBytes: RECORD_BYTES,
    partitions: 6,
    rates: args.rates,
    seconds: args.seconds,
    batchAges: args.batchAges,
    rounds: args.rounds,
    machine: { cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
  },
  rounds: [],
  latency: [],
  skipped: [],
};
const file = join(dir, "records.jsonl");
const ctx: BenchContext = {
  args,
  stack,
  stateDir,
  brokers: stack.kafkaBrokers.join(","),
  run,
  dir,
  topics,
  progress,
  file,
  fileBytes: 0,
  tools: undefined,
  indexes: [],
  name: (what) => `${run}-${what}`,
};

async function step(section: string, needs: string | undefined, body: () => Promise<void>): Promise<void> {
  // Interrupted: no section starts processes after the ones killed.
  if (cleaning) return;
  if (needs) {
    results.skipped.push({ section, reason: needs });
    progress.done(`${section}: skipped (${needs})`);
    return;
  }
  try {
    await body();
  } catch (error) {
    // The table gets the first lines; the log gets all of it (a stuck run's report: where the records are, the
    // services' output).
    const message = (error as Error).message;
    const reason = message.split("\n").slice(0, 6).join(" | ");
    results.skipped.push({ section, reason: `failed: ${reason}` });
    progress.done(`${section}: FAILED: ${message}`);
  }
}

/** Set once the cleanup began (the run's end, or a signal): the one cleanup both wait for. */
let cleaning: Promise<void> | undefined;

/** Topics, index schemas and the run's directory go, also after a failure; what could not go is printed. */
function cleanUp(): Promise<void> {
  cleaning ??= removeAll();
  return cleaning;
}

async function removeAll(): Promise<void> {
  const failures = await topics.cleanup();
  for (const index of ctx.indexes) {
    await index.dropAndClose().catch((error: unknown) => failures.push(`drop ${index.schema}: ${String(error)}`));
  }
  rmSync(dir, { recursive: true, force: true });
  for (const failure of failures) progress.done(`cleanup: ${failure}`);
}

// Interrupted (Ctrl-C, a CI job cancelled): the processes it started are killed and the same cleanup runs, instead of
// leaving 400 MB topics, index schemas, the record file and an rsyslogd or agent behind.
const interrupted = exitAfterCleanup(async (signal) => {
  progress.done(`${signal}: killed ${killAllTracked()} process(es) of the run; removing its topics, schemas and files`);
  await cleanUp();
});

let exitCode = 0;
try {
  if (wants("peers")) ctx.tools = await ensurePeers({ install: !args.noInstall });
  progress.update(`writing ${args.records.toLocaleString("en-US")} records of ${RECORD_BYTES} bytes`);
  ctx.fileBytes = writeRecordFile(file, run, args.records);
  results.workload.bytes = ctx.fileBytes;
  progress.done(`workload: ${args.records} records, ${(ctx.fileBytes / 1e6).toFixed(1)} MB in ${file}`);

  const throughput = wants("peers") || wants("agent") || wants("consumer") || wants("e2e");
  const bothMissing = !present.agent || !present.consumer ? "agent or consumer not there yet" : undefined;
  for (let round = 1; throughput && round <= args.rounds; round += 1) {
    const figures: ThroughputRound = {};
    const roundCtx = roundContext(ctx, round);
    const label = (section: string) => (args.rounds > 1 ? `${section} (round ${round})` : section);
    // The peers first in odd rounds, after our services in even ones: neither side always runs on the later, warmer
    // (or more fragmented) machine.
    const peersFirst = round % 2 === 1;
    if (wants("peers") && peersFirst) await step(label("peers"), undefined, () => runPeers(roundCtx, figures));
    let agentTopic: string | undefined;
    if (wants("agent")) {
      await step(label("agent"), present.agent ? undefined : "agent/src/main.ts not there yet", async () => {
        agentTopic = await runAgentAlone(roundCtx, figures);
      });
    }
    if (wants("consumer")) {
      const missing = !present.consumer
        ? "queue-consumer/src/main.ts not there yet"
        : agentTopic === undefined
          ? "needs the agent row's topic (run with the agent section)"
          : undefined;
      await step(label("consumer"), missing, () => runConsumerAlone(roundCtx, figures, agentTopic ?? ""));
    }
    if (wants("peers") && !peersFirst) await step(label("peers"), undefined, () => runPeers(roundCtx, figures));
    if (wants("e2e")) await step(label("e2e"), bothMissing, () => runEndToEnd(roundCtx, figures));
    results.rounds.push(figures);
  }
  Object.assign(results, medianRound(results.rounds));
  if (wants("latency")) await step("latency", bothMissing, () => runLatencies(ctx, results));
} catch (error) {
  progress.done(`bench: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  interrupted.remove();
  await cleanUp();
}

const rows = benchRows(results);
if (args.json) {
  process.stdout.write(`${JSON.stringify({ ...results, rows }, null, 2)}\n`);
} else {
  const w = results.workload;
  process.stdout.write(
    `workload: ${w.records.toLocaleString("en-US")} records × ~${w.recordBytes} B (${(w.bytes / 1e6).toFixed(0)} MB), ` +
      `${w.partitions} partitions, rates ${w.rates.join("/")}/s for ${w.seconds} s, batch ages ${w.batchAges.join("/")} ms, ` +
      `${w.rounds} throughput round${w.rounds === 1 ? "" : "s"} (median shown, range in brackets), ` +
      `${w.machine.cpus} CPUs\n${renderTable(rows)}\n`,
  );
  for (const skip of results.skipped) process.stdout.write(`not measured: ${skip.section}: ${skip.reason}\n`);
}
process.exit(exitCode || (results.skipped.some((s) => s.reason.startsWith("failed")) ? 1 : 0));
