import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stackEnv, tempDir, waitFor } from "@svc/testkit";
import { type Agent, startAgent } from "../index.ts";
import { createTopics, idCounts, readTopic, type TestTopics } from "./support/kafka.ts";
import { lines, scrape, testConfig } from "./support/records.ts";

const brokers = stackEnv().kafkaBrokers;
let topics: TestTopics;
let dir: { path: string; remove(): Promise<void> };
const running: Agent[] = [];

beforeAll(async () => {
  topics = await createTopics(brokers, "agent-rotation");
  dir = await tempDir("rotation");
});
afterAll(async () => {
  await topics.remove();
  await dir.remove();
});
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((agent) => agent.stop()));
});

/** An agent on `<name>.jsonl` (created empty unless `existing`: a restart keeps what is there). */
async function start(name: string, existing = false): Promise<{ agent: Agent; source: string }> {
  const source = join(dir.path, `${name}.jsonl`);
  if (!existing) writeFileSync(source, "");
  const agent = await startAgent(
    testConfig({
      SVC_AGENT_KAFKA_BROKERS: brokers.join(","),
      SVC_AGENT_TOPIC: topics.topic,
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: join(dir.path, `${name}.checkpoint`),
    }),
  );
  running.push(agent);
  return { agent, source };
}

const shipped = (agent: Agent, n: number) =>
  waitFor(
    `${n} records shipped`,
    async () => ((await scrape(agent.metricsUrl, "svc_agent_records_shipped_total")) >= n ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 25 },
  );

/** Every id `<prefix>-0` .. `<prefix>-<total - 1>` is in the topic exactly once (no crash: no duplicate). */
async function expectAllOnce(prefix: string, total: number): Promise<void> {
  const counts = idCounts(await readTopic(brokers, topics.topic));
  const mine = [...counts].filter(([id]) => id.startsWith(`${prefix}-`));
  const missing: string[] = [];
  for (let n = 0; n < total; n += 1) if (!counts.has(`${prefix}-${n}`)) missing.push(`${prefix}-${n}`);
  expect(missing).toEqual([]);
  expect(mine.filter(([, n]) => n > 1)).toEqual([]);
  expect(mine.length).toBe(total);
}

/** Appends `count` lines in slices of 50, yielding between them, so the agent reads while the file is written. */
async function writeWhileReading(path: string, prefix: string, from: number, count: number): Promise<void> {
  for (let n = from; n < from + count; n += 50) {
    appendFileSync(path, lines(prefix, n, Math.min(50, from + count - n)));
    await Bun.sleep(0);
  }
}

describe("agent across rotations (real Kafka)", () => {
  test("rename + create while writing: the old file is finished (late lines too), then the new one is read", async () => {
    const { agent, source } = await start("rename");
    await writeWhileReading(source, "rename", 0, 500);
    renameSync(source, `${source}.1`);
    // The writer has not reopened yet: its next lines still go to the renamed file, and the new file is empty.
    writeFileSync(source, "");
    appendFileSync(`${source}.1`, lines("rename", 500, 100));
    await writeWhileReading(source, "rename", 600, 400);
    await shipped(agent, 1000);
    expect(await scrape(agent.metricsUrl, 'svc_agent_rotations_total{kind="rename"}')).toBe(1);
    await expectAllOnce("rename", 1000);
  });

  test("copytruncate while writing, with the agent caught up and with it behind: no line lost or repeated", async () => {
    const { agent, source } = await start("copytruncate");
    await writeWhileReading(source, "copy", 0, 300);
    await shipped(agent, 300);
    // Caught up: the copy holds nothing new; the truncated file is read from its start.
    copyFileSync(source, `${source}.1`);
    truncateSync(source, 0);
    await writeWhileReading(source, "copy", 300, 300);
    await shipped(agent, 600);
    // Behind: many lines written at once, then copied and truncated before the agent could read them all; the
    // writer goes on at once, refilling the file past the agent's read position. The rest comes from the copy.
    appendFileSync(source, lines("copy", 600, 5000));
    copyFileSync(source, `${source}.2`);
    truncateSync(source, 0);
    appendFileSync(source, lines("copy", 5600, 3000));
    await shipped(agent, 8600);
    const truncations =
      (await scrape(agent.metricsUrl, 'svc_agent_rotations_total{kind="copytruncate"}')) +
      (await scrape(agent.metricsUrl, 'svc_agent_rotations_total{kind="truncate"}'));
    expect(truncations).toBe(2);
    await expectAllOnce("copy", 8600);
  });

  test("file deleted and recreated: the rest of the deleted file is shipped, then the new file from its start", async () => {
    const { agent, source } = await start("recreate");
    await writeWhileReading(source, "recreate", 0, 200);
    await shipped(agent, 200);
    rmSync(source);
    writeFileSync(source, lines("recreate", 200, 100));
    await writeWhileReading(source, "recreate", 300, 100);
    await shipped(agent, 400);
    expect(await scrape(agent.metricsUrl, 'svc_agent_rotations_total{kind="recreate"}')).toBe(1);
    await expectAllOnce("recreate", 400);
  });

  test("two rotations while the agent is stopped: on restart the checkpoint's file (now .2), the generation at .1, then the new file", async () => {
    const first = await start("stopped");
    await writeWhileReading(first.source, "stopped", 0, 300);
    await shipped(first.agent, 300);
    await first.agent.stop();
    running.splice(running.indexOf(first.agent), 1);
    const { source } = first;
    // logrotate (numbered, rename + create) twice while the agent is down, the writer going on in between.
    appendFileSync(source, lines("stopped", 300, 100));
    renameSync(source, `${source}.1`);
    writeFileSync(source, lines("stopped", 400, 200));
    renameSync(`${source}.1`, `${source}.2`);
    renameSync(source, `${source}.1`);
    writeFileSync(source, lines("stopped", 600, 100));
    const { agent } = await start("stopped", true);
    await shipped(agent, 400);
    expect(await scrape(agent.metricsUrl, 'svc_agent_rotations_total{kind="rename"}')).toBe(2);
    await expectAllOnce("stopped", 700);
  });
});
