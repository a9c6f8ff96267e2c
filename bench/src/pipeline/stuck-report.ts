import { readFile } from "node:fs/promises";
import { BenchError } from "../errors.ts";
import type { TrackedProcess } from "../spawn-tracked.ts";
import type { BenchContext } from "./context.ts";
import type { IndexReader } from "./index-reader.ts";
import { describeWhereabouts, whereTheRecordsAre } from "./where-records-are.ts";

export interface StuckRun {
  topic: string;
  groupId: string;
  index: IndexReader;
  /** The agent's checkpoint file: how far into the source it has shipped. */
  checkpoint: string;
  agent: TrackedProcess;
  consumer: TrackedProcess;
}

async function checkpointText(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch (error) {
    return `unreadable (${(error as Error).message})`;
  }
}

/**
 * A run that did not finish, explained: where the records are (Kafka's ends, the group's commits, what is in
 * objects), the agent's checkpoint against the source's size, and the end of both services' output while they still
 * run. Whatever cannot be read is said so; the original failure is the cause.
 */
export async function stuckReport(
  ctx: Pick<BenchContext, "topics" | "fileBytes">,
  run: StuckRun,
  failure: unknown,
): Promise<BenchError> {
  let where: string;
  try {
    where = describeWhereabouts(await whereTheRecordsAre(ctx.topics, run.topic, run.groupId, run.index));
  } catch (error) {
    where = `where the records are: unknown (${(error as Error).message})`;
  }
  const lines = [
    (failure as Error).message,
    where,
    `source: ${ctx.fileBytes} bytes; agent checkpoint: ${await checkpointText(run.checkpoint)}`,
    `agent output (end):\n${run.agent.tail().slice(-3_000)}`,
    `consumer output (end):\n${run.consumer.tail().slice(-3_000)}`,
  ];
  return new BenchError("BENCH_STEP_FAILED", lines.join("\n"), { subject: "end to end", cause: failure });
}
