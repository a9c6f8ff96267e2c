import type { BenchContext } from "./context.ts";
import { waitForCount } from "./context.ts";
import { startCpuMeter } from "./cpu-budget.ts";
import { IndexReader } from "./index-reader.ts";
import type { ThroughputRound } from "./results.ts";
import { spawnConsumer } from "./services.ts";
import { settleFor } from "./settle.ts";

/** Batch age of the throughput rows: short, so the last partial batches do not wait 9 s at the end of the count. */
export const THROUGHPUT_BATCH_AGE_MS = 1_000;

export function consumerSettings(
  ctx: Pick<BenchContext, "name" | "brokers" | "stack">,
  topic: string,
  what: string,
  batchMaxAgeMs: number,
) {
  const schema = ctx
    .name(what)
    .replace(/[^a-z0-9_]/g, "_")
    .toLowerCase();
  return {
    brokers: ctx.brokers,
    topic,
    groupId: ctx.name(`${what}-group`),
    s3: ctx.stack.s3,
    bucket: ctx.stack.s3.buckets.includes("svc-audit") ? "svc-audit" : (ctx.stack.s3.buckets[0] ?? "svc-audit"),
    keyPrefix: `bench/${ctx.name(what)}/`,
    pgUrl: ctx.stack.postgresUrl,
    indexSchema: schema,
    batchMaxAgeMs,
  };
}

/**
 * The consumer alone: a topic that already holds every record (the agent's, same keys as production) into S3
 * objects and the index, timed from spawn until the objects hold every record; the index's distinct ids confirm.
 */
export async function runConsumerAlone(ctx: BenchContext, results: ThroughputRound, topic: string): Promise<void> {
  const n = ctx.args.records;
  const settings = consumerSettings(ctx, topic, "consumer", THROUGHPUT_BATCH_AGE_MS);
  const index = new IndexReader(ctx.stack.postgresUrl, settings.indexSchema);
  ctx.indexes.push(index);
  await settleFor(ctx, "consumer");
  const meter = startCpuMeter(ctx.stateDir);
  const consumer = spawnConsumer(settings);
  try {
    const ms = await waitForCount(ctx, "consumer: topic → S3", () => index.durableRecords(), n, {
      startedAt: consumer.startedAt,
      abort: consumer.exitedEarly,
      intervalMs: 50,
    });
    const budget = meter.spent({ consumer: consumer.cpuMs() });
    consumer.rss.sample();
    const peakRss = await consumer.stop();
    const stored = await index.storedCount(ctx.run);
    if (stored !== n) throw new Error(`consumer: the index holds ${stored} distinct ids, expected ${n}`);
    results.consumer = { records: n, bytes: ctx.fileBytes, ms, peakRss, budget };
    ctx.progress.done(
      `consumer: ${n} records in ${(ms / 1000).toFixed(2)} s, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`,
    );
  } finally {
    await consumer.stop();
  }
}
