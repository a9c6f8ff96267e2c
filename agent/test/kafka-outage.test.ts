import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithServers, type PrivateServers, startPrivateServers, tempDir, waitFor } from "@svc/testkit";
import { type Agent, startAgent } from "../index.ts";
import { createTopics, idCounts, readTopic } from "./support/kafka.ts";
import { lines, scrape, testConfig } from "./support/records.ts";

describeWithServers("agent while its Kafka is stopped and started again (a private broker)", () => {
  let kafka: PrivateServers | undefined;
  let dir: { path: string; remove(): Promise<void> };
  let agent: Agent | undefined;
  /** Agents a test started beside `agent`: stopped at the end even when their test failed. */
  const running: Agent[] = [];

  beforeAll(async () => {
    dir = await tempDir("outage");
    kafka = await startPrivateServers(["kafka"]);
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([agent, ...running].map((started) => started?.stop()));
    await kafka?.remove();
    await dir.remove();
  }, 120_000);

  test("stops reading with bounded memory while the broker is down, and resumes by itself: every line arrives", async () => {
    const broker = kafka as PrivateServers;
    const brokers = (broker.env.SVC_STACK_KAFKA_BROKERS ?? "").split(",");
    const topics = await createTopics(brokers, "agent-outage");
    const source = join(dir.path, "audit.jsonl");
    writeFileSync(source, lines("outage", 0, 200));
    const maxInFlight = 64 * 1024;
    agent = await startAgent(
      testConfig({
        SVC_AGENT_KAFKA_BROKERS: brokers.join(","),
        SVC_AGENT_TOPIC: topics.topic,
        SVC_AGENT_SOURCE: source,
        SVC_AGENT_CHECKPOINT_FILE: join(dir.path, "checkpoint.json"),
        SVC_AGENT_BATCH_BYTES: "16384",
        SVC_AGENT_MAX_LINE_BYTES: "4096",
        SVC_AGENT_MAX_IN_FLIGHT_BYTES: String(maxInFlight),
        SVC_AGENT_KAFKA_TIMEOUT_MS: "2000",
      }),
    );
    const url = agent.metricsUrl;
    const sample = (name: string) => scrape(url, name);
    const until = (what: string, ok: () => Promise<boolean>, timeoutMs = 20_000) =>
      waitFor(what, async () => ((await ok()) ? true : undefined), { timeoutMs, intervalMs: 50 });

    await until("the first lines shipped", async () => (await sample("svc_agent_records_shipped_total")) >= 200);
    await broker.stop();
    // 2,000 lines (about 800 KB) while the broker is down: far more than the agent may hold.
    appendFileSync(source, lines("outage", 200, 2_000));
    const size = statSync(source).size;
    await until("reading stopped at the in-flight bound", async () => {
      const behind = await sample("svc_agent_bytes_behind");
      return behind > size / 2 && (await sample("svc_agent_in_flight_bytes")) > maxInFlight / 2;
    });
    expect(await sample("svc_agent_in_flight_bytes")).toBeLessThanOrEqual(maxInFlight);
    // The memory behind it: the read buffers holding the unacknowledged lines (256 KiB each), not the 800 KB appended.
    expect(await sample("svc_agent_read_buffer_bytes")).toBeLessThanOrEqual(512 * 1024);
    expect(await sample("svc_agent_lines_read_total")).toBeLessThan(2_200);
    // Stalled: batches fail and are retried (batches sent while the broker was stopping may still have landed).
    await until(
      "the agent reports the stall",
      async () => (await sample("svc_agent_shipping")) === 0 && (await fetch(`${url}/health`)).status === 503,
    );
    expect(await sample("svc_agent_send_retries_total")).toBeGreaterThan(0);

    await broker.start();
    await until("every line shipped", async () => (await sample("svc_agent_records_shipped_total")) >= 2_200, 60_000);
    expect(await sample("svc_agent_bytes_behind")).toBe(0);
    expect(agent.state()).toBe("shipping");
    const counts = idCounts(await readTopic(brokers, topics.topic));
    const missing: string[] = [];
    for (let n = 0; n < 2_200; n += 1) if (!counts.has(`outage-${n}`)) missing.push(`outage-${n}`);
    expect(missing).toEqual([]);
  }, 150_000);

  test("standard input that ends while the broker is down is sent once it is back, past the shutdown timeout", async () => {
    const broker = kafka as PrivateServers;
    const brokers = (broker.env.SVC_STACK_KAFKA_BROKERS ?? "").split(",");
    const topics = await createTopics(brokers, "agent-outage-stdin");
    await broker.stop();
    let input: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stdin = new ReadableStream<Uint8Array>({
      start(controller) {
        input = controller;
      },
    });
    const piped = await startAgent(
      testConfig({
        SVC_AGENT_KAFKA_BROKERS: brokers.join(","),
        SVC_AGENT_TOPIC: topics.topic,
        SVC_AGENT_SOURCE: "-",
        SVC_AGENT_KAFKA_TIMEOUT_MS: "2000",
        // A pipe cannot be read again: its end is no signal, so this bound is not what limits the wait.
        SVC_AGENT_SHUTDOWN_TIMEOUT_MS: "0",
      }),
      { stdin },
    );
    running.push(piped);
    let settled = false;
    piped.done.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    input?.enqueue(Buffer.from(lines("stdin-outage", 0, 100)));
    input?.close();
    await waitFor(
      "sends retried after standard input ended",
      async () => ((await scrape(piped.metricsUrl, "svc_agent_send_retries_total")) >= 2 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(settled).toBe(false);
    expect(piped.state()).toBe("kafka-retrying");
    await broker.start();
    await piped.done;
    expect(piped.state()).toBe("stopped");
    const counts = idCounts(await readTopic(brokers, topics.topic));
    const once = [...Array(100).keys()].filter((n) => counts.get(`stdin-outage-${n}`) === 1);
    expect(once.length).toBe(100);
  }, 150_000);
});
