import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stackEnv, tempDir, waitFor } from "@svc/testkit";
import pino from "pino";
import { type Agent, REDACTED, readCheckpoint, startAgent } from "../index.ts";
import {
  countMessages,
  createTopic,
  createTopics,
  headerText,
  idCounts,
  readTopic,
  removeTopics,
  type TestTopics,
} from "./support/kafka.ts";
import { auditRecord, captureLogs, line, lines, scrape, testConfig } from "./support/records.ts";

const brokers = stackEnv().kafkaBrokers;
let topics: TestTopics;
let dir: { path: string; remove(): Promise<void> };
const running: Agent[] = [];

beforeAll(async () => {
  topics = await createTopics(brokers, "agent-file");
  dir = await tempDir("file");
});
afterAll(async () => {
  await topics.remove();
  await dir.remove();
});
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((agent) => agent.stop()));
});

let fileNumber = 0;
function paths(): { source: string; checkpoint: string } {
  fileNumber += 1;
  return {
    source: join(dir.path, `audit-${fileNumber}.jsonl`),
    checkpoint: join(dir.path, `cp-${fileNumber}`, "cp.json"),
  };
}

async function start(env: Record<string, string>, logger?: pino.Logger): Promise<Agent> {
  const agent = await startAgent(
    testConfig({ SVC_AGENT_KAFKA_BROKERS: brokers.join(","), SVC_AGENT_TOPIC: topics.topic, ...env }),
    { logger },
  );
  running.push(agent);
  return agent;
}

const shipped = (agent: Agent, n: number, sample = "svc_agent_records_shipped_total") =>
  waitFor(`${n} of ${sample}`, async () => ((await scrape(agent.metricsUrl, sample)) >= n ? true : undefined), {
    timeoutMs: 20_000,
    intervalMs: 25,
  });

describe("agent tailing a file (real Kafka)", () => {
  test("ships each line keyed by tenant with CreateTime = when it was shipped; a partial last line waits for its newline", async () => {
    const { source, checkpoint } = paths();
    // Older than the topic's retention (24 h on the stack): stamped with their own time, the broker would delete them
    // at its next check, before the writer read them.
    const t1 = new Date(Date.now() - 3 * 86_400_000 + 123);
    const t2 = new Date(Date.now() - 2 * 86_400_000 + 456);
    const startedAt = BigInt(Date.now());
    const a = auditRecord("key-a", { tenant: "tenant-a", time: t1 });
    const b = auditRecord("key-b", { tenant: "tenant-b", time: t2 });
    const c = { ...auditRecord("key-c", { time: t2 }), tenant_id: "", claimed_tenant_id: "claimed-c" };
    const partial = line(auditRecord("key-d", { tenant: "tenant-d", time: t1 }));
    writeFileSync(source, line(a) + line(b) + line(c) + partial.slice(0, 100));
    const agent = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(agent, 3);
    expect(await scrape(agent.metricsUrl, "svc_agent_lines_read_total")).toBe(3);
    // The partial line is read but held: it counts as behind, and the checkpoint stops before it.
    expect(await scrape(agent.metricsUrl, "svc_agent_bytes_behind")).toBe(100);
    await waitFor(
      "checkpoint",
      async () => ((await readCheckpoint(checkpoint))?.offset === statSync(source).size - 100 ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    appendFileSync(source, partial.slice(100));
    await shipped(agent, 4);
    expect(await scrape(agent.metricsUrl, "svc_agent_bytes_behind")).toBe(0);

    const messages = await readTopic(brokers, topics.topic);
    const byId = new Map(messages.map((m) => [JSON.parse(m.value.toString()).id as string, m]));
    expect([...byId.keys()].filter((id) => id.startsWith("key-")).sort()).toEqual(["key-a", "key-b", "key-c", "key-d"]);
    expect(byId.get("key-a")?.key.toString()).toBe("tenant-a");
    expect(byId.get("key-b")?.key.toString()).toBe("tenant-b");
    expect(byId.get("key-c")?.key.toString()).toBe("claimed-c");
    const shippedAt = ["key-a", "key-b", "key-c", "key-d"].map((id) => byId.get(id)?.timestamp ?? -1n);
    expect(shippedAt.every((t) => t >= startedAt && t <= BigInt(Date.now()))).toBe(true);
    expect(byId.get("key-d")?.value.toString()).toBe(partial.slice(0, -1));
    expect(byId.get("key-a")?.value.toString()).toBe(line(a).slice(0, -1));
  });

  test("an idle agent reads an appended line when the file system reports it, not at its next poll", async () => {
    const { source, checkpoint } = paths();
    writeFileSync(source, lines("watch", 0, 1));
    // A poll far longer than the wait below: only the directory watch can wake the reader in time.
    const agent = await start({
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: checkpoint,
      SVC_AGENT_POLL_MS: "10000",
    });
    // The first line is read at start; then the reader is idle on its 10 s poll.
    await waitFor(
      "first line",
      async () => ((await scrape(agent.metricsUrl, "svc_agent_records_shipped_total")) >= 1 ? true : undefined),
      {
        timeoutMs: 9_000,
        intervalMs: 25,
      },
    );
    appendFileSync(source, lines("watch", 1, 1));
    await waitFor(
      "appended line",
      async () => ((await scrape(agent.metricsUrl, "svc_agent_records_shipped_total")) >= 2 ? true : undefined),
      {
        timeoutMs: 5_000,
        intervalMs: 25,
      },
    );
  });

  test("a long stretch of blank lines does not hold the read buffers it went through; the lines after it ship intact", async () => {
    const { source, checkpoint } = paths();
    writeFileSync(source, lines("blank-before", 0, 1));
    const agent = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(agent, 1);
    // 16 MiB of whitespace-only lines: skipped, and nothing is in flight while they are read.
    appendFileSync(source, `${" ".repeat(1023)}\n`.repeat(16 * 1024));
    await waitFor(
      "blank lines read",
      async () => ((await scrape(agent.metricsUrl, "svc_agent_bytes_behind")) === 0 ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 25,
      },
    );
    // Bounded by the buffers kept for reuse (the 4 MiB in-flight bound's worth), not by the 16 MiB read.
    expect(await scrape(agent.metricsUrl, "svc_agent_read_buffer_bytes")).toBeLessThanOrEqual(6 * 1024 * 1024);
    const after = lines("blank-after", 0, 1);
    appendFileSync(source, after);
    await shipped(agent, 2);
    const messages = await readTopic(brokers, topics.topic);
    const shippedAfter = messages.find((m) => m.value.toString().includes('"blank-after-0"'));
    expect(shippedAfter?.value.toString()).toBe(after.slice(0, -1));
  });

  test("each dead-letter reason lands in the .dlq with reason, source, file-id and offset headers, and is counted", async () => {
    const { source, checkpoint } = paths();
    const notJson = Buffer.from("this is { not json\n");
    const invalid = Buffer.from(`${JSON.stringify({ id: "dlq-invalid", time: "yesterday" })}\n`);
    const tooLarge = Buffer.from(line(auditRecord("dlq-too-large", { bytes: 3000 })));
    const good = Buffer.from(line(auditRecord("dlq-good")));
    const text = line(auditRecord("dlq-utf8"));
    const notUtf8 = Buffer.from(text.replace("endpoint", "endp\u0000int"));
    notUtf8[notUtf8.indexOf(0)] = 0xff;
    const parts = [notJson, invalid, tooLarge, notUtf8, good];
    writeFileSync(source, Buffer.concat(parts));
    const agent = await start({
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: checkpoint,
      SVC_AGENT_MAX_LINE_BYTES: "1024",
    });
    await shipped(agent, 1);
    for (const reason of ["not-json", "invalid-record", "too-large", "not-utf8"]) {
      await shipped(agent, 1, `svc_agent_dead_lettered_total{reason="${reason}"}`);
    }
    const stat = statSync(source);
    const dead = await readTopic(brokers, topics.dlq);
    const mine = dead.filter((m) => headerText(m, "source") === source);
    expect(mine.map((m) => headerText(m, "reason")).sort()).toEqual([
      "invalid-record",
      "not-json",
      "not-utf8",
      "too-large",
    ]);
    const offsets: number[] = [];
    let at = 0;
    for (const part of parts) {
      offsets.push(at);
      at += part.length;
    }
    const byReason = new Map(mine.map((m) => [headerText(m, "reason"), m]));
    expect(headerText(byReason.get("not-json") as never, "offset")).toBe(String(offsets[0]));
    expect(headerText(byReason.get("invalid-record") as never, "offset")).toBe(String(offsets[1]));
    expect(headerText(byReason.get("too-large") as never, "offset")).toBe(String(offsets[2]));
    expect(headerText(byReason.get("not-utf8") as never, "offset")).toBe(String(offsets[3]));
    for (const m of mine) expect(headerText(m, "file-id")).toBe(`${stat.dev}:${stat.ino}`);
    expect(byReason.get("not-json")?.value.toString()).toBe("this is { not json");
    expect(byReason.get("too-large")?.value.length).toBe(1024);
    expect(byReason.get("invalid-record")?.value.toString()).toBe(invalid.toString().trim());
    expect(headerText(byReason.get("invalid-record") as never, "line-error")).toContain("/");
    // The pipeline went on: the good line after the bad ones is in the topic.
    expect(idCounts(await readTopic(brokers, topics.topic)).get("dlq-good")).toBe(1);
  });

  test("a line of 24 MiB without a newline goes through one read buffer; once it ends it is dead-lettered from its first byte", async () => {
    const { source, checkpoint } = paths();
    const before = line(auditRecord("long-before"));
    writeFileSync(source, before);
    const agent = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(agent, 1);
    appendFileSync(source, Buffer.alloc(24 * 1024 * 1024, "x"));
    const size = statSync(source).size;
    await waitFor(
      "the long line read to the file's end",
      async () => ((await scrape(agent.metricsUrl, "svc_agent_bytes_read_total")) >= size ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 25 },
    );
    // Nothing is acknowledged while the line lasts: a fresh 256 KiB buffer per read would hold all 24 MiB here.
    // Two: the one the first record was read into, and the one every read of the line goes into again.
    expect(await scrape(agent.metricsUrl, "svc_agent_read_buffer_bytes")).toBeLessThanOrEqual(2 * 256 * 1024);
    expect(await scrape(agent.metricsUrl, "svc_agent_in_flight_bytes")).toBe(64 * 1024);
    appendFileSync(source, `\n${line(auditRecord("long-after"))}`);
    await shipped(agent, 2);
    await shipped(agent, 1, 'svc_agent_dead_lettered_total{reason="too-large"}');
    const dead = (await readTopic(brokers, topics.dlq)).filter((m) => headerText(m, "source") === source);
    expect(dead.map((m) => [headerText(m, "reason"), headerText(m, "offset"), m.value.length])).toEqual([
      ["too-large", String(before.length), 64 * 1024],
    ]);
    expect(idCounts(await readTopic(brokers, topics.topic)).get("long-after")).toBe(1);
    expect(await scrape(agent.metricsUrl, "svc_agent_bytes_behind")).toBe(0);
  });

  test("short bad lines are batched by what their dead letters weigh: 20,000 of them reach a one-partition .dlq", async () => {
    const { source, checkpoint } = paths();
    const dlq = `${topics.topic}-one.dlq`;
    await createTopic(brokers, dlq, 1);
    try {
      // 40 KB of lines, ~200 bytes each on the wire with their headers: one batch by source bytes would be a 4 MB
      // record batch, which Kafka refuses for good (MESSAGE_TOO_LARGE).
      writeFileSync(source, `${"x\n".repeat(20_000)}${line(auditRecord("short-after"))}`);
      const agent = await start({
        SVC_AGENT_SOURCE: source,
        SVC_AGENT_CHECKPOINT_FILE: checkpoint,
        SVC_AGENT_DLQ_TOPIC: dlq,
      });
      await shipped(agent, 1);
      expect(await scrape(agent.metricsUrl, 'svc_agent_dead_lettered_total{reason="not-json"}')).toBe(20_000);
      expect(await countMessages(brokers, dlq)).toBe(20_000);
      expect(agent.state()).toBe("shipping");
    } finally {
      await removeTopics(brokers, [dlq]);
    }
  });

  test("a record naming a secret's field reaches the .dlq with that value replaced and a redacted header", async () => {
    const { source, checkpoint } = paths();
    const secret = `hunter2-${crypto.randomUUID()}`;
    const record = { ...auditRecord("dlq-secret"), attributes: { note: "kept", password: secret } };
    writeFileSync(source, line(record) + line(auditRecord("dlq-secret-good")));
    const agent = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(agent, 1);
    await shipped(agent, 1, 'svc_agent_dead_lettered_total{reason="invalid-record"}');
    const dead = (await readTopic(brokers, topics.dlq)).filter((m) => headerText(m, "source") === source);
    expect(dead.length).toBe(1);
    const [letter] = dead;
    expect(headerText(letter as never, "reason")).toBe("invalid-record");
    expect(headerText(letter as never, "redacted")).toBe("/attributes/password");
    expect(headerText(letter as never, "offset")).toBe("0");
    expect(letter?.value.toString()).not.toContain(secret);
    expect(JSON.parse(letter?.value.toString() ?? "")).toEqual({
      ...record,
      attributes: { note: "kept", password: REDACTED },
    });
  });

  test("restart from the checkpoint: stop, append, start again: only the new lines are shipped", async () => {
    const { source, checkpoint } = paths();
    writeFileSync(source, lines("restart", 0, 50));
    const first = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(first, 50);
    await first.stop();
    const saved = await readCheckpoint(checkpoint);
    const stat = statSync(source);
    // With the file's time when the agent opened it (nothing was written to it since): a bound for a restart that
    // finds the file gone (agent/README.md, "Rotation").
    expect(saved).toMatchObject({
      path: source,
      dev: stat.dev,
      ino: stat.ino,
      offset: stat.size,
      mtimeMs: stat.mtimeMs,
    });
    appendFileSync(source, lines("restart", 50, 30));
    const second = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint });
    await shipped(second, 30);
    await second.stop();
    const counts = idCounts(await readTopic(brokers, topics.topic));
    const mine = [...counts].filter(([id]) => id.startsWith("restart-"));
    expect(mine.length).toBe(80);
    expect(mine.every(([, n]) => n === 1)).toBe(true);
    expect((await readCheckpoint(checkpoint))?.offset).toBe(statSync(source).size);
  });

  test("the checkpoint advances only after Kafka acknowledged, and is replaced atomically (temp file + rename)", async () => {
    const { source, checkpoint } = paths();
    const lateTopic = `${topics.topic}-late`;
    writeFileSync(source, lines("late", 0, 20));
    const agent = await start({
      SVC_AGENT_SOURCE: source,
      SVC_AGENT_CHECKPOINT_FILE: checkpoint,
      SVC_AGENT_TOPIC: lateTopic,
      SVC_AGENT_DLQ_TOPIC: topics.dlq,
    });
    // The topic does not exist yet: Kafka cannot acknowledge, so the lines are read but no checkpoint is written.
    await waitFor(
      "send retries",
      async () => ((await scrape(agent.metricsUrl, "svc_agent_send_retries_total")) >= 2 ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    expect(await scrape(agent.metricsUrl, "svc_agent_lines_read_total")).toBe(20);
    expect(await readCheckpoint(checkpoint)).toBeUndefined();
    expect(await scrape(agent.metricsUrl, "svc_agent_bytes_behind")).toBe(statSync(source).size);
    try {
      await createTopic(brokers, lateTopic);
      await shipped(agent, 20);
      await waitFor(
        "checkpoint at the end",
        async () => ((await readCheckpoint(checkpoint))?.offset === statSync(source).size ? true : undefined),
        { timeoutMs: 5_000, intervalMs: 20 },
      );
      const inode = statSync(checkpoint).ino;
      appendFileSync(source, lines("late", 20, 5));
      await shipped(agent, 25);
      await waitFor(
        "checkpoint at the new end",
        async () => ((await readCheckpoint(checkpoint))?.offset === statSync(source).size ? true : undefined),
        { timeoutMs: 5_000, intervalMs: 20 },
      );
      // Replaced by a rename (a new inode), and no temporary file is left beside it.
      expect(statSync(checkpoint).ino).not.toBe(inode);
      expect(readdirSync(join(checkpoint, ".."))).toEqual(["cp.json"]);
      expect(await countMessages(brokers, lateTopic)).toBe(25);
    } finally {
      await agent.stop();
      const { Admin } = await import("@platformatic/kafka");
      const admin = new Admin({ clientId: "agent-test-cleanup", bootstrapBrokers: brokers });
      await admin.deleteTopics({ topics: [lateTopic] }).finally(() => admin.close());
    }
  });

  test("a checkpoint that cannot be written stops shipping with AGENT_CHECKPOINT_WRITE_FAILED and a log line; nothing is dropped", async () => {
    const { source, checkpoint } = paths();
    const logs = captureLogs();
    const logger = pino({ level: "info" }, logs);
    writeFileSync(source, lines("cpfail", 0, 10));
    const agent = await start({ SVC_AGENT_SOURCE: source, SVC_AGENT_CHECKPOINT_FILE: checkpoint }, logger);
    await shipped(agent, 10);
    rmSync(join(checkpoint, ".."), { recursive: true, force: true });
    appendFileSync(source, lines("cpfail", 10, 10));
    await waitFor("checkpoint-failed", async () => (agent.state() === "checkpoint-failed" ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const health = await fetch(`${agent.metricsUrl}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: "checkpoint-failed", code: "AGENT_CHECKPOINT_WRITE_FAILED" });
    expect(logs.lines.some((l) => l.code === "AGENT_CHECKPOINT_WRITE_FAILED" && l.level === 50)).toBe(true);
    expect(await scrape(agent.metricsUrl, "svc_agent_shipping")).toBe(0);
    // While it cannot checkpoint it ships no further batch: the lines appended now wait in the file.
    const stuck = await scrape(agent.metricsUrl, "svc_agent_records_shipped_total");
    appendFileSync(source, lines("cpfail", 20, 10));
    const failures = await scrape(agent.metricsUrl, "svc_agent_checkpoint_failures_total");
    expect(failures).toBeGreaterThan(0);
    await shipped(agent, failures + 2, "svc_agent_checkpoint_failures_total");
    expect(await scrape(agent.metricsUrl, "svc_agent_records_shipped_total")).toBe(stuck);
    expect(await scrape(agent.metricsUrl, "svc_agent_bytes_behind")).toBeGreaterThan(0);
    mkdirSync(join(checkpoint, ".."));
    await shipped(agent, 30);
    await waitFor("shipping again", async () => (agent.state() === "shipping" ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await waitFor(
      "checkpoint at the end",
      async () => ((await readCheckpoint(checkpoint))?.offset === statSync(source).size ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    const counts = idCounts(await readTopic(brokers, topics.topic));
    for (let n = 0; n < 30; n += 1) expect(counts.get(`cpfail-${n}`)).toBeGreaterThanOrEqual(1);
  });
});
