/**
 * The freshness tail's own reading (docs/audit-storage.md, "Freshness": each replica reads everything, no consumer
 * group) on the stack's broker and PostgreSQL: from the marks, and starting over when fetching keeps failing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Admin, Producer } from "@platformatic/kafka";
import { stackEnv, topicName, waitFor } from "@svc/testkit";
import { pino } from "pino";
import { KafkaTail } from "../src/kafka-tail.ts";
import { sampleRecord, testStorage } from "./support/stored-data.ts";

const storage = testStorage("tail");
const { names, sql } = storage;
const brokers = stackEnv().kafkaBrokers;
const admin = new Admin({ clientId: "api-tail-test", bootstrapBrokers: brokers });
const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
  clientId: "api-tail-test",
  bootstrapBrokers: brokers,
  acks: -1,
});
const T0 = Date.parse("2026-09-09T09:00:00Z");
const tails: KafkaTail[] = [];
const topics: string[] = [];

beforeAll(() => storage.create());

afterAll(async () => {
  await Promise.allSettled(tails.map((tail) => tail.stop()));
  await producer.close();
  await Promise.allSettled(topics.map((topic) => admin.deleteTopics({ topics: [topic] })));
  await admin.close();
  await storage.remove();
});

/** Sends `ids` to `partition`; returns the partitions Kafka acknowledged them in. */
async function produce(topic: string, partition: number, ids: string[]): Promise<number[]> {
  const result = await producer.send({
    messages: ids.map((id, i) => ({
      topic,
      partition,
      value: Buffer.from(JSON.stringify(sampleRecord(id, "tenant-tail", T0 + i))),
    })),
  });
  return (result.offsets ?? []).map((written) => written.partition);
}

/** A tail on `topic`, what it logged kept (pino's JSON lines, info and above). */
function startTail(topic: string, refreshMs = 100): { tail: KafkaTail; logged: Record<string, unknown>[] } {
  const logged: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const settings = { brokers, topic, maxRecords: 1_000, refreshMs, partitionsCheckMs: 100 };
  const tail = KafkaTail.start(sql, names.schema, settings, logger);
  tails.push(tail);
  return { tail, logged };
}

const until = (what: string, ok: () => boolean) =>
  waitFor(what, async () => (ok() ? true : undefined), { timeoutMs: 30_000, intervalMs: 20 });

test("reads every partition past its mark, joining no consumer group", async () => {
  const topic = topicName("api-tail");
  topics.push(topic);
  await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
  await produce(topic, 0, ["a0", "a1", "a2", "a3"]);
  await produce(topic, 1, ["b0", "b1"]);
  await sql.unsafe(`INSERT INTO "${names.schema}".marks (topic, partition, indexed_through) VALUES ($1, 0, 1)`, [
    topic,
  ]);
  const groupsBefore = await admin.listGroups();
  const { tail } = startTail(topic);
  // Partition 0 past its mark (offsets 2, 3); partition 1 has no mark: from its start.
  await until("the records above the marks", () => tail.store.size === 4);
  await produce(topic, 1, ["b2"]);
  await until("a record produced after the start", () => tail.store.size === 5);
  const groupsAfter = await admin.listGroups();
  expect([...groupsAfter.keys()].filter((id) => !groupsBefore.has(id) && id.includes("audit-api-tail"))).toEqual([]);
});

test("fetching that keeps failing (its topic deleted) starts the tail over; the topic made again is read", async () => {
  const topic = topicName("api-tail");
  topics.push(topic);
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  await produce(topic, 0, ["c0", "c1", "c2"]);
  const { tail, logged } = startTail(topic);
  await until("the first records", () => tail.store.size === 3);
  await admin.deleteTopics({ topics: [topic] });
  // The fetcher gives up after its retries (its failure logged); the tail starts over, and fails again while the
  // topic does not exist (the metadata: "Unknown topic").
  const notReading = (times: number) =>
    logged.find((entry) => entry.msg === `freshness tail: not reading (${times} in a row)`);
  await until("the tail started over", () => notReading(1) !== undefined);
  expect((notReading(1)?.err as { code?: string } | undefined)?.code).toBe("KAFKA_READ_FETCH_FAILED");
  await until("the tail started over again", () => notReading(2) !== undefined);
  // Made again under the same name (the broker may still be deleting it): offsets from 0 again, below where the
  // tail had read (3): out of range, so read from the earliest.
  await waitFor(
    "the topic made again",
    async () => {
      await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  await waitFor(
    "a record in the new topic",
    async () => {
      await produce(topic, 0, ["d0"]);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  await until("the new topic's record", () => tail.store.size === 4);
});

test("partitions added to the topic are read too, the others from where the tail was", async () => {
  const topic = topicName("api-tail");
  topics.push(topic);
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  await produce(topic, 0, ["e0", "e1"]);
  const { tail, logged } = startTail(topic);
  await until("partition 0's records", () => tail.store.size === 2);
  await admin.createPartitions({ topics: [{ name: topic, count: 2 }] });
  await until("the tail told of the new partition", () =>
    logged.some((entry) => entry.msg === "freshness tail: partitions added; reading them too"),
  );
  // The producer would send to the partitions it knows of (one): it reads the topic again first.
  await producer.metadata({ topics: [topic], forceUpdate: true });
  expect(await produce(topic, 1, ["f0"])).toEqual([1]);
  await produce(topic, 0, ["e2"]);
  await until("the new partition's record and a later one", () => tail.store.size === 4);
});

test("stop() while the read is still beginning (Kafka accepts and never answers) ends it without waiting", async () => {
  let connected = false;
  const silent = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open() {
        connected = true;
      },
      data() {},
    },
  });
  try {
    const tail = KafkaTail.start(
      sql,
      names.schema,
      { brokers: [`127.0.0.1:${silent.port}`], topic: topicName("api-tail"), maxRecords: 1_000, refreshMs: 100 },
      pino({ level: "silent" }),
    );
    await until("the tail's client connected", () => connected);
    // Its metadata request waits for an answer (10 s per try): stop() closes the client instead of waiting it out.
    await tail.stop();
  } finally {
    silent.stop(true);
  }
}, 5_000);
