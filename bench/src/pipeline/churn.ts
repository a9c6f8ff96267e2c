import { parseArgs } from "node:util";
import { Producer } from "@platformatic/kafka";
import { parseQueueConsumerConfig, type QueueConsumer, startConsumer } from "@svc/queue-consumer";
import { randomName, stackEnv } from "@svc/testkit";
import { BenchTopics } from "../kafka-topics.ts";
import { ProgressLine } from "../progress-line.ts";
import { consumerSettings } from "./consumer-section.ts";
import { recordLines } from "./generate-records.ts";
import { IndexReader } from "./index-reader.ts";
import { consumerEnv } from "./services.ts";
import { type RecordsWhereabouts, whereTheRecordsAre } from "./where-records-are.ts";

// bun run bench/src/pipeline/churn.ts [--rounds 12] [--freeze-ms 8000] [--records 2000] [--round-timeout-ms 40000]
// Two writer replicas in this one process, one group, 6 s session timeout. Each round starts a second replica,
// sends --records records (paced, 200 every 20 ms), and stops that replica while the whole process is frozen
// (SIGSTOP from a helper, --freeze-ms, past the session timeout); then 300 more records, and every one sent so far
// must be indexed within --round-timeout-ms. A round that is not is stuck: the run stops there and exits 1, as
// does a stop() of the first replica that does not return. It reproduced CI's hang of 2026-11-26 in its first
// round before queue-consumer a5ea19f, then lost records (a partition fetched again from a stale position; fixed
// then by dropping such positions, now by @svc/kafka-read's PartitionFetcher reading a newly assigned partition from its
// commit); the separate-process freezes of faults.ts found neither.
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  strict: true,
  options: {
    rounds: { type: "string", default: "12" },
    "freeze-ms": { type: "string", default: "8000" },
    records: { type: "string", default: "2000" },
    "round-timeout-ms": { type: "string", default: "40000" },
    json: { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const freezeMs = Number(values["freeze-ms"]);
const perRound = Number(values.records);
const roundTimeoutMs = Number(values["round-timeout-ms"]);
if (![rounds, freezeMs, perRound, roundTimeoutMs].every((n) => Number.isInteger(n) && n > 0)) {
  process.stderr.write("churn: --rounds, --freeze-ms, --records, --round-timeout-ms must be positive integers\n");
  process.exit(2);
}

const TAIL_RECORDS = 300;
const stack = stackEnv();
const progress = new ProgressLine();
const run = randomName("churn");
const ctx = { stack, brokers: stack.kafkaBrokers.join(","), name: (what: string) => `${run}-${what}` };
const topics = new BenchTopics(stack.kafkaBrokers);
const topic = await topics.create(ctx.name("events"));
const settings = { ...consumerSettings(ctx, topic, "churn", 500), env: { SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000" } };
const config = parseQueueConsumerConfig({ ...consumerEnv(settings), SVC_AUDIT_LOG_LEVEL: "error" });
const index = new IndexReader(stack.postgresUrl, settings.indexSchema);
const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
  clientId: "svc-bench-churn",
  bootstrapBrokers: stack.kafkaBrokers,
  acks: -1,
  retries: 20,
  retryDelay: 250,
});

let sent = 0;
/** Sends `count` records, 200 at a time, `gapMs` apart; the keys spread them over every partition. */
async function send(count: number, gapMs: number): Promise<void> {
  for (let done = 0; done < count; done += 200) {
    const n = Math.min(200, count - done);
    const lines = recordLines(run, sent, n, Date.now()).split("\n").slice(0, n);
    await producer.send({
      messages: lines.map((line, i) => ({
        topic,
        key: Buffer.from(String((sent + i) % 60)),
        value: Buffer.from(line),
      })),
    });
    sent += n;
    if (gapMs > 0) await Bun.sleep(gapMs);
  }
}

/** Settles with `what` or "hung" after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | "hung"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const waits: number[] = [];
const stopOutcomes: Record<string, number> = {};
let stuck: ({ round: number; stored: number; sent: number } & RecordsWhereabouts) | undefined;

let exitCode = 0;
let report: Record<string, unknown> = {};
let b: QueueConsumer | undefined;
try {
  b = await startConsumer(config);
  for (let round = 1; round <= rounds && stuck === undefined; round++) {
    const a = await startConsumer(config);
    const splitBy = Date.now() + 30_000;
    while ((a.assignedPartitions().length === 0 || b.assignedPartitions().length === 0) && Date.now() < splitBy) {
      await Bun.sleep(100);
    }
    const sending = send(perRound, 20);
    while (sent < (round - 1) * (perRound + TAIL_RECORDS) + perRound * 0.4) await Bun.sleep(20);
    // The helper freezes this process a few ms into a's stop (its leave, seals and commits), for freezeMs.
    Bun.spawn([
      "bash",
      "-c",
      `sleep 0.0${round % 10}; kill -STOP ${process.pid}; sleep ${freezeMs / 1000}; kill -CONT ${process.pid}`,
    ]);
    const outcome = await within(
      a.stop().then(
        () => "ok",
        (error: { code?: string }) => error.code ?? "error",
      ),
      freezeMs + 60_000,
    );
    stopOutcomes[outcome] = (stopOutcomes[outcome] ?? 0) + 1;
    if (outcome === "hung") exitCode = 1;
    await sending;
    await send(TAIL_RECORDS, 0);
    const started = performance.now();
    let stored = 0;
    while (performance.now() - started < roundTimeoutMs) {
      stored = await index.storedCount(run).catch(() => 0);
      if (stored >= sent) break;
      await Bun.sleep(250);
    }
    if (stored < sent)
      stuck = { round, stored, sent, ...(await whereTheRecordsAre(topics, topic, settings.groupId, index)) };
    else waits.push(Math.round(performance.now() - started));
    progress.update(`churn: round ${round}/${rounds}, ${stored.toLocaleString("en-US")} of ${sent} indexed`);
  }
  progress.done(stuck ? `churn: stuck in round ${stuck.round}` : `churn: ${rounds} rounds, every record indexed`);
  waits.sort((x, y) => x - y);
  report = {
    rounds: stuck ? stuck.round : rounds,
    stuck: stuck ?? null,
    stopOfFrozenReplica: stopOutcomes,
    indexedAfterTailMs: { median: waits[Math.floor(waits.length / 2)] ?? null, max: waits.at(-1) ?? null },
    sessionRestartsOfSurvivor: (await b.metrics.sessionRestarts.get()).values[0]?.value ?? 0,
  };
  if (stuck) exitCode = 1;
} catch (error) {
  progress.done(`churn: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  if (
    b &&
    (await within(
      b.stop().catch(() => undefined),
      60_000,
    )) === "hung"
  ) {
    report.survivorStop = "hung";
    exitCode = 1;
  }
  await producer.close().catch(() => undefined);
  if (stuck && process.env.SVC_BENCH_KEEP_STUCK) {
    process.stdout.write(`kept schema ${settings.indexSchema}, topic ${topic}\n`);
  } else {
    await topics.cleanup();
    await index.dropAndClose().catch(() => undefined);
  }
}
if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else for (const [key, value] of Object.entries(report)) process.stdout.write(`${key}: ${JSON.stringify(value)}\n`);
process.exit(exitCode);
