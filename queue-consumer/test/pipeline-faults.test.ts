/**
 * The agent's faults through the whole pipeline (issue 7, "faults"): the agent as its own process (`bun run
 * agent/src/main.ts`) tails a file into a 6-partition topic, and the writer stores every record in Object-Locked
 * objects and the index. Each test ends with a count: every id written to the file is in an object under the test's
 * key prefix and in the index, at least once. The agent's own tests count the same faults in the topic.
 */
import { beforeAll, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { readCheckpoint } from "@svc/agent";
import { type AgentProcess, scrape, spawnAgent } from "@svc/agent/testing";
import { FileTarget } from "@svc/audit-emitter";
import { type TempDir, tempDir, waitFor } from "@svc/testkit";
import { pino } from "pino";
import { type QueueConsumer, startConsumer } from "../index.ts";
import {
  bodyOf,
  consumerConfig,
  deleteTopic,
  listVersions,
  makeLines,
  type ProducedLine,
  pipelineFixture,
} from "./helpers.ts";

let consumer: QueueConsumer | undefined;
let dir: TempDir | undefined;
const agents: AgentProcess[] = [];

const fixture = pipelineFixture("pipe-faults", {
  partitions: 6,
  beforeTeardown: async () => {
    for (const agent of agents) agent.process.kill("SIGKILL");
    await Promise.all(agents.map((agent) => agent.exited));
    await consumer?.stop();
    await deleteTopic(fixture.addresses.brokers, `${fixture.names.topic}.dlq`);
    await dir?.remove();
  },
});
const { addresses, names, sql, s3 } = fixture;

beforeAll(async () => {
  dir = await tempDir("pipeline-faults");
  consumer = await startConsumer(consumerConfig(addresses, names), { logger: pino({ level: "silent" }) });
});

/** A file in the test's temporary directory. */
const inDir = (name: string) => join(dir?.path ?? "", name);

/** The agent on `source`, as its own process, checkpointing beside it. */
function startAgent(source: string): AgentProcess {
  const agent = spawnAgent({
    SVC_AGENT_SOURCE: source,
    SVC_AGENT_CHECKPOINT_FILE: `${source}.checkpoint`,
    SVC_AGENT_KAFKA_BROKERS: addresses.brokers,
    SVC_AGENT_TOPIC: names.topic,
    SVC_AGENT_METRICS_PORT: "0",
    SVC_AGENT_POLL_MS: "20",
    SVC_AGENT_LOG_LEVEL: "info",
  });
  agents.push(agent);
  return agent;
}

const text = (records: readonly ProducedLine[], from: number, to: number) =>
  records
    .slice(from, to)
    .map((record) => `${record.line}\n`)
    .join("");

/** The ids in every object version under the test's key prefix (each line's `id`). */
async function idsInObjects(): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const version of await listVersions(s3, "svc-audit", names.keyPrefix)) {
    const body = await bodyOf(
      await s3.send(new GetObjectCommand({ Bucket: "svc-audit", Key: version.Key, VersionId: version.VersionId })),
    );
    for (const row of body.toString("utf8").split("\n")) {
      if (row !== "") ids.add((JSON.parse(row) as { id: string }).id);
    }
  }
  return ids;
}

/** Waits until every id of `records` is indexed, then checks each is in an object too: the ids missing, none. */
async function expectAllStored(records: readonly ProducedLine[]): Promise<void> {
  await waitFor(
    "every id written to the file indexed",
    async () => {
      const ids = records.map((record) => record.id);
      const [row] =
        await sql`SELECT count(DISTINCT id)::int AS n FROM ${sql(`${names.schema}.events`)} WHERE id = ANY(${ids})`;
      const missing = records.length - (row as { n: number }).n;
      // Thrown, not returned: a timeout then says how far the index got.
      if (missing > 0) throw new Error(`${missing} of ${records.length} ids not indexed`);
      return true;
    },
    { timeoutMs: 90_000 },
  );
  const stored = await idsInObjects();
  expect(records.filter((record) => !stored.has(record.id)).map((record) => record.id)).toEqual([]);
}

test("the agent killed with -9 mid-stream and started again: every id written is stored", async () => {
  const source = inDir("kill.jsonl");
  const records = makeLines(20_000);
  writeFileSync(source, "");
  const first = startAgent(source);
  const url = await first.metricsUrl();
  let written = 0;
  // Slices until the agent has shipped some (surely not all), then one more it cannot have acknowledged yet.
  while (written < 15_000 && (await scrape(url, "svc_agent_records_shipped_total")) < 2_000) {
    appendFileSync(source, text(records, written, written + 500));
    written += 500;
  }
  appendFileSync(source, text(records, written, written + 1_000));
  written += 1_000;
  first.process.kill("SIGKILL");
  expect(await first.exited).not.toBe(0);
  expect((await readCheckpoint(`${source}.checkpoint`))?.offset ?? 0).toBeLessThan(statSync(source).size);
  appendFileSync(source, text(records, written, records.length));
  const second = startAgent(source);
  await second.metricsUrl();
  await expectAllStored(records);
  second.process.kill("SIGTERM");
  expect(await second.exited).toBe(0);
}, 150_000);

test.each(["rename", "copytruncate"] as const)(
  "rotation by %s while the agent is behind (stopped with SIGSTOP across it) and lines keep coming: every id stored",
  async (kind) => {
    const source = inDir(`${kind}.jsonl`);
    const records = makeLines(12_000);
    writeFileSync(source, text(records, 0, 2_000));
    const agent = startAgent(source);
    const url = await agent.metricsUrl();
    await waitFor(
      "the first lines shipped",
      async () => ((await scrape(url, "svc_agent_records_shipped_total")) >= 2_000 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    agent.process.kill("SIGSTOP");
    try {
      // Written while the agent cannot read: it is behind when the file rotates.
      appendFileSync(source, text(records, 2_000, 6_000));
      if (kind === "rename") {
        renameSync(source, `${source}.1`);
        writeFileSync(source, text(records, 6_000, 9_000));
        // The writer's late lines, before it reopened the path.
        appendFileSync(`${source}.1`, text(records, 9_000, 10_000));
      } else {
        copyFileSync(source, `${source}.1`);
        truncateSync(source, 0);
        // Refilled past the agent's read position at once: the rest of the old generation must come from the copy.
        appendFileSync(source, text(records, 6_000, 10_000));
      }
    } finally {
      agent.process.kill("SIGCONT");
    }
    appendFileSync(source, text(records, 10_000, records.length));
    await expectAllStored(records);
    expect(await scrape(url, `svc_agent_rotations_total{kind="${kind}"}`)).toBe(1);
    agent.process.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  },
  150_000,
);

test("the emitter's own size rotation (1 MiB files, 10 kept) while the agent reads: every id stored", async () => {
  const source = inDir("emitter-rotation.jsonl");
  const records = makeLines(10_000);
  const target = new FileTarget(source, false, { bytes: 1024 * 1024, keep: 10 });
  const agent = startAgent(source);
  const url = await agent.metricsUrl();
  try {
    // Batches of 200 lines as the emitter's sink writes them, paced so the agent reads while files rotate.
    for (let n = 0; n < records.length; n += 200) {
      await target.write(Buffer.from(text(records, n, n + 200)));
      await Bun.sleep(5); // pacing the writer, not a synchronisation
    }
  } finally {
    await target.close();
  }
  await expectAllStored(records);
  // ~4 MB of lines in 1 MiB files: at least three rotations, each followed by rename.
  expect(await scrape(url, 'svc_agent_rotations_total{kind="rename"}')).toBeGreaterThanOrEqual(3);
  agent.process.kill("SIGTERM");
  expect(await agent.exited).toBe(0);
}, 150_000);
