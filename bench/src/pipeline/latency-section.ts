import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { consumerSettings } from "./consumer-section.ts";
import type { BenchContext } from "./context.ts";
import { waitForCount } from "./context.ts";
import { recordLines } from "./generate-records.ts";
import { IndexReader } from "./index-reader.ts";
import { countOf, objectsPerHour, percentile, ratePerSecond } from "./percentiles.ts";
import { writeAtRate } from "./record-file.ts";
import type { BenchResults, LatencyFigures } from "./results.ts";
import { spawnAgent, spawnConsumer } from "./services.ts";
import { settleFor } from "./settle.ts";

const WARM_UP_RECORDS = 600;

/** The (rate, batch age) pairs: every rate at the first age, and 10k/s at each further age (the object goal). */
export function latencyPlan(rates: readonly number[], ages: readonly number[]): { rate: number; age: number }[] {
  const [first, ...others] = ages;
  if (first === undefined) return [];
  return [...rates.map((rate) => ({ rate, age: first })), ...others.map((age) => ({ rate: 10_000, age }))];
}

/**
 * One fixed-rate run: agent and consumer on a fresh topic and file; a warm-up batch proves the pipeline is up;
 * then records are appended at `rate` for `seconds`, each stamped with the time it was written. Latency per record
 * = its object's `written_at` − its `time`, read from the index once every record is there.
 */
export async function runLatency(ctx: BenchContext, rate: number, batchMaxAgeMs: number): Promise<LatencyFigures> {
  const what = `lat${rate}a${batchMaxAgeMs}`;
  const topic = await ctx.topics.create(ctx.name(what));
  const dlqTopic = await ctx.topics.create(`${topic}.dlq`, 1);
  const source = join(ctx.dir, `${what}.jsonl`);
  const tag = ctx.name(`${what}-m`);
  writeFileSync(source, recordLines(ctx.name(`${what}-w`), 0, WARM_UP_RECORDS, Date.now()));
  const settings = consumerSettings(ctx, topic, what, batchMaxAgeMs);
  const index = new IndexReader(ctx.stack.postgresUrl, settings.indexSchema);
  ctx.indexes.push(index);
  await settleFor(ctx, `${rate}/s`);
  const consumer = spawnConsumer(settings);
  const agent = spawnAgent({
    source,
    checkpointFile: join(ctx.dir, `${what}.checkpoint`),
    brokers: ctx.brokers,
    topic,
    dlqTopic,
  });
  const abort = () => agent.exitedEarly() ?? consumer.exitedEarly();
  try {
    await waitForCount(ctx, `${rate}/s: warm-up`, () => index.durableRecords(), WARM_UP_RECORDS, {
      startedAt: performance.now(),
      abort,
      intervalMs: 200,
      timeoutMs: 120_000,
    });
    const label = `${rate.toLocaleString("en-US")}/s (age ${batchMaxAgeMs} ms)`;
    const startedAt = Date.now();
    const written = await writeAtRate(source, tag, rate, ctx.args.seconds, {
      onTick: (n) => ctx.progress.update(`${label}: ${n.toLocaleString("en-US")} written`),
    });
    const target = WARM_UP_RECORDS + written.records;
    const drainMs = 120_000 + batchMaxAgeMs * 2;
    // Every offset through the last one written per partition is durable or was deleted by Kafka's retention before
    // the writer read it (it never will be durable: the stack keeps 128 MiB per partition, which a writer lagging at
    // 50k/s can fall behind by). The topic's offsets start at 0.
    const settled = async () => [...(await index.writtenThrough()).values()].reduce((sum, last) => sum + last + 1, 0);
    const drained = await waitForCount(ctx, `${label}: durable`, settled, target, {
      startedAt: performance.now(),
      abort,
      intervalMs: 200,
      timeoutMs: drainMs,
    }).then(
      () => true,
      (error: unknown) => {
        if (abort()) throw error;
        ctx.progress.done(`${label}: not every record durable ${drainMs / 1000} s after the last write`);
        return false;
      },
    );
    const [agentRss, consumerRss] = await Promise.all([agent.stop(), consumer.stop()]);
    const histogram = await index.latencyHistogram(tag);
    const stored = countOf(histogram);
    // Not durable when we stopped waiting: infinitely late for the percentiles (they are not left out).
    if (!drained && stored < written.records) histogram.set(Number.POSITIVE_INFINITY, written.records - stored);
    const skipped = await index.skippedOffsets();
    const perPartition = await index.objectCuts(startedAt);
    const hourly = [...perPartition.values()].map((times) => objectsPerHour(times) ?? 0);
    const figures: LatencyFigures = {
      rate,
      batchMaxAgeMs,
      records: written.records,
      stored,
      skipped,
      p50Ms: percentile(histogram, 50),
      p99Ms: percentile(histogram, 99),
      maxMs: percentile(histogram, 100),
      objectsPerPartitionHour: hourly.length > 0 ? Math.max(...hourly) : undefined,
      agentRss,
      consumerRss,
      writerMaxLagMs: written.maxLagMs,
      achievedRate: ratePerSecond(written.records, written.ms),
    };
    ctx.progress.done(
      `${label}: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.objectsPerPartitionHour?.toFixed(0)} obj/partition/h` +
        (skipped > 0 ? `, ${skipped} records deleted by Kafka's retention before they were read` : ""),
    );
    return figures;
  } finally {
    await Promise.all([agent.stop(), consumer.stop()]);
  }
}

export async function runLatencies(ctx: BenchContext, results: BenchResults): Promise<void> {
  for (const { rate, age } of latencyPlan(ctx.args.rates, ctx.args.batchAges)) {
    results.latency.push(await runLatency(ctx, rate, age));
  }
}
