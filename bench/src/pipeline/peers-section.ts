import { join } from "node:path";
import { BenchError } from "../errors.ts";
import type { BenchContext } from "./context.ts";
import { kcatConsume, kcatProduce, rsyslogShip } from "./peer-baselines.ts";
import type { ThroughputRound } from "./results.ts";
import { settleFor } from "./settle.ts";

/** kcat -P, kcat -C and rsyslog imfile → omkafka on the run's file, each into a fresh 6-partition topic. */
export async function runPeers(ctx: BenchContext, results: ThroughputRound): Promise<void> {
  const tools = ctx.tools;
  if (!tools) throw new BenchError("BENCH_PEER_MISSING", "the peer tools were not prepared");
  const n = ctx.args.records;

  const kcatTopic = await ctx.topics.create(ctx.name("kcat"));
  await settleFor(ctx, "kcat -P");
  ctx.progress.update(`kcat -P: producing ${n.toLocaleString("en-US")} records`);
  results.kcatProduce = await kcatProduce(tools, ctx.brokers, ctx.topics, kcatTopic, ctx.file, n);
  ctx.progress.done(`kcat -P: ${n} records in ${(results.kcatProduce.ms / 1000).toFixed(2)} s`);

  await settleFor(ctx, "kcat -C");
  ctx.progress.update("kcat -C: consuming to a local file");
  results.kcatConsume = await kcatConsume(tools, ctx.brokers, kcatTopic, join(ctx.dir, "kcat-consumed.jsonl"), n);
  ctx.progress.done(`kcat -C: ${n} records in ${(results.kcatConsume.ms / 1000).toFixed(2)} s`);

  const rsyslogTopic = await ctx.topics.create(ctx.name("rsyslog"));
  await settleFor(ctx, "rsyslog");
  ctx.progress.update("rsyslog imfile → omkafka: shipping");
  results.rsyslog = await rsyslogShip(tools, ctx.brokers, ctx.topics, rsyslogTopic, ctx.file, n, ctx.dir);
  ctx.progress.done(`rsyslog: ${n} records in ${(results.rsyslog.ms / 1000).toFixed(2)} s`);
}
