import { afterAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { ensureIndexSchema } from "@svc/queue-consumer";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { BenchError } from "../../src/errors.ts";
import { BenchTopics } from "../../src/kafka-topics.ts";
import { IndexReader } from "../../src/pipeline/index-reader.ts";
import { stuckReport } from "../../src/pipeline/stuck-report.ts";
import { spawnTracked, type TrackedProcess } from "../../src/spawn-tracked.ts";

const env = stackEnv();
const topics = new BenchTopics(env.kafkaBrokers);
const processes: TrackedProcess[] = [];
const readers: IndexReader[] = [];
const dir = await mkdtemp(join(tmpdir(), "stuck-report-"));

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill9()));
  await Promise.all(readers.map((r) => r.dropAndClose()));
  expect(await topics.cleanup()).toEqual([]);
  await rm(dir, { recursive: true, force: true });
});

/** A stand-in service that has said `words` on stderr and still runs (the report reads a live service's output). */
async function serviceThatSaid(name: string, words: string): Promise<TrackedProcess> {
  const service = spawnTracked(name, ["bash", "-c", `echo ${words} >&2; exec sleep 60`]);
  processes.push(service);
  const deadline = performance.now() + 10_000;
  while (!service.tail().includes(words) && performance.now() < deadline) await Bun.sleep(10);
  return service;
}

const stall = new BenchError("BENCH_TIMEOUT", "records: stuck at 7 of 10 for 60 s (after 75 s)");

test("stuckReport: the failure, then per partition Kafka's end, the group's commit and what objects hold, the agent's checkpoint and both services' output", async () => {
  const topic = await topics.create(randomName("bench-stuck"), 6);
  const producer = new Producer({
    clientId: "stuck-report-test",
    bootstrapBrokers: env.kafkaBrokers,
    serializers: stringSerializers,
  });
  try {
    await producer.send({ messages: ["a", "b", "c"].map((value) => ({ topic, value, partition: 1 })) });
  } finally {
    await producer.close();
  }
  const schema = randomName("bench_stuck").replaceAll("-", "_");
  const sql = new SQL({ url: env.postgresUrl, max: 1 });
  try {
    await ensureIndexSchema(sql, schema);
    await sql.unsafe(
      `INSERT INTO "${schema}".objects (bucket, key, version_id, topic, partition, first_offset, last_offset, records,
         bytes, min_time, max_time, written_at)
       VALUES ('b', 'k', 'v', $1, 1, 0, 1, 2, 10, now(), now(), now())`,
      [topic],
    );
  } finally {
    await sql.close();
  }
  const index = new IndexReader(env.postgresUrl, schema);
  readers.push(index);
  const checkpoint = join(dir, "agent.checkpoint");
  await writeFile(checkpoint, '{"offset":4096}\n');

  const error = await stuckReport(
    { topics, fileBytes: 8192 },
    {
      topic,
      groupId: randomName("bench-stuck-group"),
      index,
      checkpoint,
      agent: await serviceThatSaid("agent", "agent-shipped-everything"),
      consumer: await serviceThatSaid("consumer", "records-lost-to-retention"),
    },
    stall,
  );

  expect(error.code).toBe("BENCH_STEP_FAILED");
  expect(error.cause).toBe(stall);
  const lines = error.message.split("\n");
  expect(lines[0]).toBe(stall.message);
  expect(lines).toContain("in Kafka: 3");
  expect(lines).toContain("  partition 0: end 0, committed -1, written through -1");
  expect(lines).toContain("  partition 1: end 3, committed -1, written through 1");
  expect(lines).toContain('source: 8192 bytes; agent checkpoint: {"offset":4096}');
  expect(error.message).toContain("agent output (end):\nagent-shipped-everything");
  expect(error.message).toContain("consumer output (end):\nrecords-lost-to-retention");
});

test("stuckReport: what cannot be read is said so (no index schema, no checkpoint), and the report still comes", async () => {
  const index = new IndexReader(env.postgresUrl, randomName("bench_none").replaceAll("-", "_"));
  readers.push(index);
  const error = await stuckReport(
    { topics, fileBytes: 10 },
    {
      topic: await topics.create(randomName("bench-stuck"), 6),
      groupId: randomName("bench-stuck-group"),
      index,
      checkpoint: join(dir, "never-written.checkpoint"),
      agent: await serviceThatSaid("agent", "agent-started"),
      consumer: await serviceThatSaid("consumer", "consumer-started"),
    },
    stall,
  );

  expect(error.code).toBe("BENCH_STEP_FAILED");
  expect(error.message).toMatch(/^where the records are: unknown \(.*does not exist.*\)$/m);
  expect(error.message).toMatch(/^source: 10 bytes; agent checkpoint: unreadable \(.*ENOENT.*\)$/m);
  expect(error.message).toContain("consumer output (end):\nconsumer-started");
});
