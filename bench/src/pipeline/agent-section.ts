import { join } from "node:path";
import { BenchError } from "../errors.ts";
import type { BenchContext } from "./context.ts";
import { waitForCount } from "./context.ts";
import type { ThroughputRound } from "./results.ts";
import { spawnAgent } from "./services.ts";
import { settleFor } from "./settle.ts";

/**
 * The agent alone: the run's file into a fresh topic, timed from spawn until the topic holds every record (the
 * same measure as rsyslog's). Returns the topic, which the consumer row then reads.
 */
export async function runAgentAlone(ctx: BenchContext, results: ThroughputRound): Promise<string> {
  const n = ctx.args.records;
  const topic = await ctx.topics.create(ctx.name("agent"));
  const dlqTopic = await ctx.topics.create(`${topic}.dlq`, 1);
  await settleFor(ctx, "agent");
  const agent = spawnAgent({
    source: ctx.file,
    checkpointFile: join(ctx.dir, "agent-alone.checkpoint"),
    brokers: ctx.brokers,
    topic,
    dlqTopic,
  });
  try {
    const ms = await waitForCount(ctx, "agent: file → topic", () => ctx.topics.total(topic), n, {
      startedAt: agent.startedAt,
      abort: agent.exitedEarly,
    });
    const cpuMs = agent.cpuMs();
    agent.rss.sample();
    const peakRss = await agent.stop();
    // Exactly the file's records, none dead-lettered: a figure reached with copies or bad lines would not be the
    // agent's rate for the file (kcat -P's count is checked the same way).
    const [shipped, deadLettered] = [await ctx.topics.total(topic), await ctx.topics.total(dlqTopic, 1)];
    if (shipped !== n || deadLettered !== 0) {
      throw new BenchError(
        "BENCH_STEP_FAILED",
        `agent: topic ${topic} holds ${shipped} records and its .dlq ${deadLettered}, expected ${n} and 0`,
      );
    }
    results.agent = { records: n, bytes: ctx.fileBytes, ms, peakRss, cpuMs };
    ctx.progress.done(
      `agent: ${n} records in ${(ms / 1000).toFixed(2)} s, CPU ${((cpuMs ?? 0) / 1000).toFixed(2)} s, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`,
    );
    return topic;
  } finally {
    await agent.stop();
  }
}
