import { join } from "node:path";
import { consumerSettings, THROUGHPUT_BATCH_AGE_MS } from "./consumer-section.ts";
import type { BenchContext } from "./context.ts";
import { waitForCount } from "./context.ts";
import { startCpuMeter } from "./cpu-budget.ts";
import { IndexReader } from "./index-reader.ts";
import type { ThroughputRound } from "./results.ts";
import { spawnAgent, spawnConsumer } from "./services.ts";
import { settleFor } from "./settle.ts";
import { stuckReport } from "./stuck-report.ts";
import { sustainedRate } from "./sustained-rate.ts";

/** With a 1 s batch age, no record durable for this long while records are missing is a stall, not a slow run. */
const STALLED_MS = 60_000;

/** Agent and consumer together on the run's file: spawn of both → every record in a durable object. */
export async function runEndToEnd(ctx: BenchContext, results: ThroughputRound): Promise<void> {
  const n = ctx.args.records;
  const topic = await ctx.topics.create(ctx.name("e2e"));
  const dlqTopic = await ctx.topics.create(`${topic}.dlq`, 1);
  const settings = consumerSettings(ctx, topic, "e2e", THROUGHPUT_BATCH_AGE_MS);
  const index = new IndexReader(ctx.stack.postgresUrl, settings.indexSchema);
  ctx.indexes.push(index);
  const checkpoint = join(ctx.dir, "e2e.checkpoint");
  await settleFor(ctx, "end to end");
  const meter = startCpuMeter(ctx.stateDir);
  const consumer = spawnConsumer(settings);
  const agent = spawnAgent({
    source: ctx.file,
    checkpointFile: checkpoint,
    brokers: ctx.brokers,
    topic,
    dlqTopic,
  });
  try {
    const ms = await waitForCount(ctx, "end to end: line → durable", () => index.durableRecords(), n, {
      startedAt: Math.min(agent.startedAt, consumer.startedAt),
      abort: () => agent.exitedEarly() ?? consumer.exitedEarly(),
      intervalMs: 50,
      stalledMs: STALLED_MS,
    }).catch(async (error: unknown) => {
      throw await stuckReport(ctx, { topic, groupId: settings.groupId, index, checkpoint, agent, consumer }, error);
    });
    const budget = meter.spent({ agent: agent.cpuMs(), consumer: consumer.cpuMs() });
    const [agentRss, consumerRss] = await Promise.all([agent.stop(), consumer.stop()]);
    const stored = await index.storedCount(ctx.run);
    if (stored !== n) throw new Error(`end to end: the index holds ${stored} distinct ids, expected ${n}`);
    const sustained = sustainedRate(await index.durableObjects(), n);
    results.endToEnd = {
      records: n,
      bytes: ctx.fileBytes,
      ms,
      peakRss: agentRss + consumerRss,
      agentRss,
      consumerRss,
      budget,
      sustainedPerSecond: sustained?.perSecond,
    };
    const steady = sustained === undefined ? "" : `, ${Math.round(sustained.perSecond)} ev/s from 10 % to 90 % durable`;
    ctx.progress.done(`end to end: ${n} records in ${(ms / 1000).toFixed(2)} s${steady}`);
  } finally {
    await Promise.all([agent.stop(), consumer.stop()]);
  }
}
