import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stackEnv, tempDir } from "@svc/testkit";
import pino from "pino";
import { readCheckpoint, startAgent } from "../index.ts";
import { createTopics, idCounts, readTopic, type TestTopics } from "./support/kafka.ts";
import { captureLogs, lines, testConfig } from "./support/records.ts";

// SVC_AGENT_STOP_READ_MS: a sidecar stopped after its writer, whose volume goes with the Pod, reads the rest of the
// file before it drains. ~20 MB written at once and the stop asked at once: far more than the 4 MiB the agent may
// have read and not yet had acknowledged, so without the setting most of it is left unread.
const brokers = stackEnv().kafkaBrokers;
let topics: TestTopics;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  topics = await createTopics(brokers, "agent-stop-read");
  dir = await tempDir("stop-read");
});
afterAll(async () => {
  await topics.remove();
  await dir.remove();
});

async function stopRightAfterWriting(
  prefix: string,
  stopReadMs: string,
  logger?: pino.Logger,
): Promise<{ offset: number; size: number }> {
  const source = join(dir.path, `${prefix}.jsonl`);
  const checkpoint = join(dir.path, `${prefix}.checkpoint`);
  writeFileSync(source, "");
  const agent = await startAgent(
    testConfig({
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: checkpoint,
      SVC_AGENT_KAFKA_BROKERS: brokers.join(","),
      SVC_AGENT_TOPIC: topics.topic,
      SVC_AGENT_STOP_READ_MS: stopReadMs,
    }),
    { logger },
  );
  appendFileSync(source, lines(prefix, 0, 50_000));
  await agent.stop();
  return { offset: (await readCheckpoint(checkpoint))?.offset ?? 0, size: statSync(source).size };
}

test("without it, a stop asked right after 20 MB were written leaves most of them unread (read at the next start)", async () => {
  const { offset, size } = await stopRightAfterWriting("unread", "0");
  expect(offset).toBeLessThan(size / 2);
});

test("with it, the same stop reads the whole file first: checkpoint at its end, every line in the topic once", async () => {
  const { offset, size } = await stopRightAfterWriting("read", "60000");
  expect(offset).toBe(size);
  const counts = idCounts(await readTopic(brokers, topics.topic));
  const missing: string[] = [];
  for (let n = 0; n < 50_000; n += 1) if (counts.get(`read-${n}`) !== 1) missing.push(`read-${n}`);
  expect(missing).toEqual([]);
}, 90_000);

test("a stop whose read-on time runs out says how much is left unread, and drains what it read", async () => {
  const logs = captureLogs();
  const { offset, size } = await stopRightAfterWriting("short", "1", pino({ level: "info" }, logs));
  expect(offset).toBeLessThan(size);
  const warning = logs.lines.find((entry) => entry.msg === "stopping with bytes still unread");
  expect(warning?.unreadBytes).toBeGreaterThan(0);
  expect(logs.lines.some((entry) => entry.msg === "agent stopped")).toBe(true);
});
