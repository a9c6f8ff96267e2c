import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stackEnv, tempDir, waitFor } from "@svc/testkit";
import { readCheckpoint } from "../index.ts";
import { createTopics, idCounts, readTopic, type TestTopics } from "./support/kafka.ts";
import { lines, scrape } from "./support/records.ts";
import { spawnAgent } from "./support/spawn-agent.ts";

const brokers = stackEnv().kafkaBrokers;
let topics: TestTopics;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  topics = await createTopics(brokers, "agent-main");
  dir = await tempDir("main");
});
afterAll(async () => {
  await topics.remove();
  await dir.remove();
});

const baseEnv = () => ({
  SVC_AGENT_KAFKA_BROKERS: brokers.join(","),
  SVC_AGENT_TOPIC: topics.topic,
  SVC_AGENT_METRICS_PORT: "0",
  SVC_AGENT_POLL_MS: "20",
  SVC_AGENT_LOG_LEVEL: "info",
});

const atLeast = (url: string, sample: string, n: number, timeoutMs = 20_000) =>
  waitFor(`${sample} >= ${n}`, async () => ((await scrape(url, sample)) >= n ? true : undefined), {
    timeoutMs,
    intervalMs: 20,
  });

describe("bun run agent/src/main.ts", () => {
  test("standard input: every line is shipped, and the end of input ends the agent with 0", async () => {
    const child = spawnAgent({ ...baseEnv(), SVC_AGENT_SOURCE: "-" });
    await child.metricsUrl();
    const text = lines("stdin", 0, 300);
    // In pieces that cut lines, as a pipe does.
    for (let at = 0; at < text.length; at += 7_777) child.process.stdin.write(text.slice(at, at + 7_777));
    await child.process.stdin.end();
    expect(await child.exited).toBe(0);
    const counts = idCounts(await readTopic(brokers, topics.topic));
    for (let n = 0; n < 300; n += 1) expect(counts.get(`stdin-${n}`)).toBe(1);
  });

  test("SIGTERM: what was read is sent and checkpointed before the process exits 0", async () => {
    const source = join(dir.path, "sigterm.jsonl");
    const checkpoint = join(dir.path, "sigterm.cp");
    writeFileSync(source, lines("sigterm", 0, 200));
    // A long linger: the lines are read and waiting in a batch when the signal comes.
    const child = spawnAgent({
      ...baseEnv(),
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: checkpoint,
      SVC_AGENT_LINGER_MS: "10000",
    });
    const url = await child.metricsUrl();
    await atLeast(url, "svc_agent_lines_read_total", 200);
    expect(await scrape(url, "svc_agent_records_shipped_total")).toBe(0);
    child.process.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect((await readCheckpoint(checkpoint))?.offset).toBe(statSync(source).size);
    expect(child.logs.some((l) => l.msg === "agent stopped")).toBe(true);
    const counts = idCounts(await readTopic(brokers, topics.topic));
    for (let n = 0; n < 200; n += 1) expect(counts.get(`sigterm-${n}`)).toBe(1);
  });

  test("kill -9 while shipping, then a restart: every line is in the topic at least once", async () => {
    const source = join(dir.path, "kill.jsonl");
    const checkpoint = join(dir.path, "kill.cp");
    const env = { ...baseEnv(), SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint };
    const total = 20_000;
    writeFileSync(source, "");
    const first = spawnAgent(env);
    const url = await first.metricsUrl();
    let written = 0;
    // Write in slices until the agent has shipped some but surely not all, then kill it mid-stream.
    while ((await scrape(url, "svc_agent_records_shipped_total")) < 2_000) {
      appendFileSync(source, lines("kill", written, 500));
      written += 500;
    }
    // Lines appended just before the kill cannot be acknowledged and checkpointed yet (on a slow machine the agent
    // may have caught up with the slices above).
    appendFileSync(source, lines("kill", written, 1_000));
    written += 1_000;
    first.process.kill("SIGKILL");
    expect(await first.exited).not.toBe(0);
    const before = (await readCheckpoint(checkpoint))?.offset ?? 0;
    expect(before).toBeLessThan(statSync(source).size);
    appendFileSync(source, lines("kill", written, total - written));
    const second = spawnAgent(env);
    await second.metricsUrl();
    await waitFor(
      "checkpoint at the end of the file",
      async () => ((await readCheckpoint(checkpoint))?.offset === statSync(source).size ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    second.process.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const counts = idCounts(await readTopic(brokers, topics.topic));
    const missing: string[] = [];
    let duplicates = 0;
    for (let n = 0; n < total; n += 1) {
      const seen = counts.get(`kill-${n}`) ?? 0;
      if (seen === 0) missing.push(`kill-${n}`);
      duplicates += Math.max(0, seen - 1);
    }
    process.stderr.write(`kill -9: ${total} lines, ${duplicates} shipped twice, ${missing.length} missing\n`);
    expect(missing).toEqual([]);
  });
});
