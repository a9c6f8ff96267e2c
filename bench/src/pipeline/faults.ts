import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { randomName, stackEnv } from "@svc/testkit";
import { BenchTopics } from "../kafka-topics.ts";
import { ProgressLine } from "../progress-line.ts";
import type { TrackedProcess } from "../spawn-tracked.ts";
import { consumerSettings } from "./consumer-section.ts";
import { IndexReader } from "./index-reader.ts";
import { checkLedger } from "./ledger.ts";
import { writeAtRate } from "./record-file.ts";
import { spawnAgent, spawnConsumer } from "./services.ts";

// bun run bench/src/pipeline/faults.ts --kills 50 [--rate 2000] [--target both|agent|consumer] [--json]
// kill -9 of the agent and the consumer while records flow, each restarted at once; then the ledger: every
// emitted id stored at least once, and how many copies the retries left (in Kafka, and in S3 objects).
// --fault freeze: two consumer replicas in one group (6 s session timeout); each fault stops one or both (SIGSTOP)
// for --freeze-ms (default 8000, past the session timeout: the group hands partitions over) and lets them go on.
/** How long a replica told to stop during a freeze may take after the thaw before it is killed (counted as hung). */
const STOP_GRACE_MS = 60_000;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  strict: true,
  options: {
    kills: { type: "string", default: "50" },
    rate: { type: "string", default: "2000" },
    target: { type: "string", default: "both" },
    "min-gap-ms": { type: "string", default: "200" },
    "max-gap-ms": { type: "string", default: "3000" },
    "batch-age-ms": { type: "string", default: "2000" },
    fault: { type: "string", default: "kill" },
    "freeze-ms": { type: "string", default: "8000" },
    json: { type: "boolean", default: false },
  },
});
const kills = Number(values.kills);
const rate = Number(values.rate);
const minGap = Number(values["min-gap-ms"]);
const maxGap = Number(values["max-gap-ms"]);
const freezeMs = Number(values["freeze-ms"]);
const freeze = values.fault === "freeze";
const target = freeze ? "consumer" : values.target;
if (![kills, rate, minGap, maxGap, freezeMs].every((n) => Number.isInteger(n) && n > 0) || maxGap < minGap) {
  process.stderr.write(
    "faults: --kills, --rate, --min-gap-ms, --max-gap-ms, --freeze-ms must be positive integers (min ≤ max)\n",
  );
  process.exit(2);
}
if (values.fault !== "kill" && !freeze) {
  process.stderr.write("faults: --fault must be kill or freeze\n");
  process.exit(2);
}
if (target !== "both" && target !== "agent" && target !== "consumer") {
  process.stderr.write("faults: --target must be both, agent or consumer\n");
  process.exit(2);
}

const stack = stackEnv();
const progress = new ProgressLine();
const run = randomName("faults");
const dir = mkdtempSync(join(tmpdir(), `${run}-`));
const topics = new BenchTopics(stack.kafkaBrokers);
const ctx = { stack, brokers: stack.kafkaBrokers.join(","), name: (what: string) => `${run}-${what}` };
const topic = await topics.create(ctx.name("events"));
const dlqTopic = await topics.create(`${topic}.dlq`, 1);
const source = join(dir, "records.jsonl");
const tag = ctx.name("r");
const settings = {
  ...consumerSettings(ctx, topic, "faults", Number(values["batch-age-ms"])),
  // The shortest session timeout the writer takes: a freeze past it hands the partitions over.
  env: freeze ? { SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000" } : ({} as Record<string, string>),
};
const index = new IndexReader(stack.postgresUrl, settings.indexSchema);
const startAgent = () =>
  spawnAgent({ source, checkpointFile: join(dir, "agent.checkpoint"), brokers: ctx.brokers, topic, dlqTopic });
const startConsumer = () => spawnConsumer(settings);

let agent: TrackedProcess | undefined;
let consumer: TrackedProcess | undefined;
// --fault freeze: the second replica of the group (the first is `consumer`).
let replica: TrackedProcess | undefined;
let exitCode = 0;
let report: Record<string, unknown> = {};
try {
  await Bun.write(source, "");
  agent = startAgent();
  consumer = startConsumer();
  if (freeze) replica = spawnConsumer(settings, "consumer-2");
  let stopWriting = false;
  // The writer runs until the kills are done; its total is the ledger's "emitted".
  let emitted = 0;
  const writer = (async () => {
    while (!stopWriting) {
      const chunk = await writeAtRate(source, tag, rate, 1, { firstSeq: emitted });
      emitted += chunk.records;
    }
  })();
  const killed = { agent: 0, consumer: 0 };
  const frozen = { consumer: 0, "consumer-2": 0 };
  // --fault freeze: each stop during a freeze, its time after the thaw and its exit code (or "SIGKILL": it hung).
  const stops: { ms: number; exit: number | string | null }[] = [];
  // A kill lands mid-stream only if the victim is working: before each kill, wait (≤ 60 s) until the victim has
  // moved records since it was (re)started — the topic grew for the agent, the objects for the consumer.
  const progressOf = { agent: () => topics.total(topic), consumer: () => index.durableRecords().catch(() => 0) };
  const mark = { agent: 0, consumer: 0 };
  for (let i = 1; i <= kills; i++) {
    const victim = target === "both" ? (Math.random() < 0.5 ? "agent" : "consumer") : target;
    const working = Date.now() + 60_000;
    while ((await progressOf[victim]()) <= mark[victim] && Date.now() < working) await Bun.sleep(100);
    await Bun.sleep(minGap + Math.random() * (maxGap - minGap));
    if (freeze) {
      // In turn: the first replica, the second, both, both with the first told to stop.
      const turn = i % 4;
      if (turn !== 0 || !consumer || !replica) {
        // One replica (the other takes its partitions over), or both at once (as a stalled machine would).
        const victims = (turn === 1 ? [consumer] : turn === 2 ? [replica] : [consumer, replica]).filter(
          (p): p is TrackedProcess => p !== undefined,
        );
        for (const one of victims) one.proc.kill("SIGSTOP");
        await Bun.sleep(freezeMs);
        for (const one of victims) {
          one.proc.kill("SIGCONT");
          frozen[one.name as keyof typeof frozen]++;
          if (one.proc.exitCode !== null) throw new Error(`${one.name} exited after a freeze: ${one.tail()}`);
        }
      } else {
        // Both frozen just after the first was told to stop (SIGTERM): it stops, and leaves, with a session the
        // group dropped meanwhile. It must exit within the grace (no SIGKILL), and is started again.
        const started = performance.now();
        const exited = consumer.stop(freezeMs + STOP_GRACE_MS);
        await Bun.sleep(Math.random() * 100);
        for (const one of [consumer, replica]) one.proc.kill("SIGSTOP");
        await Bun.sleep(freezeMs);
        for (const one of [consumer, replica]) one.proc.kill("SIGCONT");
        await exited;
        stops.push({
          ms: Math.round(performance.now() - started - freezeMs),
          exit: consumer.proc.signalCode ?? consumer.proc.exitCode,
        });
        frozen.consumer++;
        frozen["consumer-2"]++;
        consumer = startConsumer();
      }
    } else if (victim === "agent" && agent) {
      await agent.kill9();
      agent = startAgent();
    } else if (consumer) {
      await consumer.kill9();
      consumer = startConsumer();
    }
    mark[victim] = await progressOf[victim]();
    if (!freeze) killed[victim]++;
    const what = freeze ? "freeze" : "kill";
    progress.update(`faults: ${what} ${i}/${kills} (${victim}), ${emitted.toLocaleString("en-US")} records written`);
  }
  stopWriting = true;
  await writer;
  progress.done(
    freeze
      ? `faults: ${kills} freezes of ${freezeMs} ms done (consumer ${frozen.consumer}, consumer-2 ${frozen["consumer-2"]}); ${emitted} written`
      : `faults: ${kills} kills done (agent ${killed.agent}, consumer ${killed.consumer}); ${emitted} written`,
  );

  // Drain: every emitted id in the index, or give up after two minutes and report what is missing.
  const deadline = Date.now() + 120_000;
  let stored = 0;
  while (Date.now() < deadline) {
    stored = await index.storedCount(tag).catch(() => 0);
    progress.update(`faults: ${stored.toLocaleString("en-US")}/${emitted.toLocaleString("en-US")} stored`);
    if (stored >= emitted) break;
    await Bun.sleep(500);
  }
  const ids = await index.allIds(tag);
  const ledger = checkLedger(emitted, ids);
  const inObjects = await index.recordsInObjects();
  const inKafka = await topics.total(topic);
  const postings = await index.postings();
  report = {
    ...(freeze ? { freezes: frozen, freezeMs, stopsWhileFrozen: stops } : { kills: killed }),
    // A replica that exited by itself (an uncaught error) is a failure of the run even if the other wrote all.
    exited: [consumer, replica].filter((p) => p?.proc.exitCode != null).map((p) => `${p?.name}: ${p?.proc.exitCode}`),
    rate,
    emitted,
    stored: ledger.stored,
    missing: ledger.missingCount,
    firstMissing: ledger.missing,
    // Copies the agent re-shipped after a kill (Kafka holds them at new offsets) …
    duplicatesInKafka: inKafka - emitted,
    // … and records the consumer wrote twice (a batch re-read after a kill between PUT and commit).
    rewrittenByConsumer: inObjects - inKafka,
    objects: await index.objectCount(),
    // every indexed event in exactly one principal posting (docs/audit-storage.md, "Principal postings")
    postings,
  };
  const hung = stops.filter((stop) => stop.exit === "SIGKILL").length;
  const postingsWrong = postings.posted !== postings.events || postings.strays > 0;
  if (ledger.missingCount > 0 || (report.exited as string[]).length > 0 || hung > 0 || postingsWrong) exitCode = 1;
} catch (error) {
  progress.done(`faults: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  await Promise.all([agent?.stop(), consumer?.stop(), replica?.stop()]);
  await topics.cleanup();
  await index.dropAndClose().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  for (const [key, value] of Object.entries(report)) process.stdout.write(`${key}: ${JSON.stringify(value)}\n`);
  process.stdout.write(exitCode === 0 ? "ledger: every emitted id stored at least once\n" : "ledger: FAILED\n");
}
process.exit(exitCode);
