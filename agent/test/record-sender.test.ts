/**
 * RecordSender on the stack's real Kafka: what it sends is what a consumer reads (partition, key, value, headers,
 * CreateTime, order), consecutive sends continue the idempotent sequence, and a partition the broker refuses
 * fails the send while the
 * other topic's partitions are acknowledged; sending the same array again after the fix sends only what was
 * refused, so every record is stored exactly once. (The refusal is MESSAGE_TOO_LARGE from a topic whose
 * max.message.bytes is below a batch: Kafka 4 caps min.insync.replicas at the replication factor, so a one-broker
 * cluster never answers NOT_ENOUGH_REPLICAS.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Admin, ConfigResourceTypes, IncrementalAlterConfigOperationTypes, Producer } from "@platformatic/kafka";
import { randomName, rejectionOf, stackEnv, topicName, waitFor } from "@svc/testkit";
import { canRetrySend } from "../src/kafka-send-error.ts";
import { RecordSender } from "../src/record-sender.ts";
import type { KafkaMessage } from "../src/ship-batches.ts";
import { createTopic, readTopic } from "./support/kafka.ts";

const brokers = stackEnv().kafkaBrokers;
const admin = new Admin({ clientId: randomName("agent-sender-admin"), bootstrapBrokers: brokers });
const created: string[] = [];
let producer: Producer<Buffer, Buffer, Buffer, Buffer>;
let sender: RecordSender;

beforeAll(() => {
  producer = new Producer({ clientId: randomName("agent-sender"), bootstrapBrokers: brokers });
  sender = new RecordSender({
    producer,
    clientId: randomName("agent-sender"),
    timeoutMs: 10_000,
    slabBytes: 1 << 20,
    slabs: 2,
  });
});

afterAll(async () => {
  await sender?.close();
  await producer?.close();
  if (created.length > 0) await admin.deleteTopics({ topics: created });
  await admin.close();
});

async function newTopic(purpose: string): Promise<string> {
  const topic = topicName(purpose);
  await createTopic(brokers, topic);
  created.push(topic);
  return topic;
}

const b = (text: string) => Buffer.from(text);

/** Sends as ShipBatches does: again after a failure (a topic just created answers NOT_LEADER_OR_FOLLOWER a moment). */
const sendAll = (messages: KafkaMessage[]) =>
  waitFor(
    "Kafka's acknowledgement",
    async () => {
      await sender.send(messages);
      return true;
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );

describe("RecordSender (real Kafka)", () => {
  test("records land in partition (value mod 6), in order, with key, value, headers and CreateTime; sends continue", async () => {
    const topic = await newTopic("agent-sender");
    // Recent: a CreateTime older than the broker's time retention (24 h on the stack) lets its next check (every
    // minute) delete these records before they are read back. A fixed 2026-01-01 did, once it was a day old.
    const stamp = BigInt(Date.now());
    const first: KafkaMessage[] = Array.from({ length: 60 }, (_, i) => ({
      topic,
      partition: 1_000_003 + i, // as the tenant hash is: any non-negative integer
      key: b(`tenant-${i % 6}`),
      value: b(`{"n":${i}}`),
      timestamp: stamp + BigInt(i),
    }));
    const dead: KafkaMessage[] = [0, 1].map((i) => ({
      topic,
      value: b(`not json ${i}`),
      timestamp: stamp,
      headers: new Map([[b("reason"), b("not-json")]]),
    }));
    await sendAll([...first, ...dead]);
    // A second and third send: sequence numbers continue per partition under one producer id (the broker
    // refuses a gap or a repeat with OUT_OF_ORDER_SEQUENCE_NUMBER).
    const more = (from: number): KafkaMessage[] =>
      Array.from({ length: 12 }, (_, i) => ({ topic, partition: i, key: b("k"), value: b(`{"n":${from + i}}`) }));
    await sendAll(more(100));
    await sendAll(more(200));

    const messages = await readTopic(brokers, topic);
    expect(messages).toHaveLength(60 + 2 + 24);
    const byPartition = new Map<number, string[]>();
    for (const m of messages)
      byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.value.toString()]);
    for (let p = 0; p < 6; p++) {
      const expected = [
        ...first.filter((m) => (m.partition as number) % 6 === p).map((m) => m.value?.toString()),
        ...messages
          .filter((m) => m.partition === p && m.value.toString().startsWith("not json"))
          .map((m) => m.value.toString()),
        ...more(100)
          .filter((m) => (m.partition as number) % 6 === p)
          .map((m) => m.value?.toString()),
        ...more(200)
          .filter((m) => (m.partition as number) % 6 === p)
          .map((m) => m.value?.toString()),
      ];
      expect(byPartition.get(p)).toEqual(expected as string[]);
    }
    const firstRead = messages.find((m) => m.value.toString() === '{"n":7}');
    expect(firstRead?.key.toString()).toBe("tenant-1");
    expect(firstRead?.timestamp).toBe(stamp + 7n);
    expect(firstRead?.headers.size).toBe(0);
    const deadRead = messages.filter((m) => m.value.toString().startsWith("not json"));
    expect(deadRead).toHaveLength(2);
    expect(new Set(deadRead.map((m) => m.partition)).size).toBe(2); // no partition: round robin
    for (const m of deadRead) {
      expect(m.key === null || m.key === undefined || m.key.length === 0).toBe(true);
      expect([...m.headers].map(([k, v]) => [k.toString(), v.toString()])).toEqual([["reason", "not-json"]]);
    }
  });

  test("a refused topic fails the send, the other is stored; sent again after the fix, only its records go: each once", async () => {
    const good = await newTopic("agent-sender-good");
    const strict = topicName("agent-sender-strict");
    await admin.createTopics({
      topics: [strict],
      partitions: 6,
      replicas: 1,
      configs: [{ name: "max.message.bytes", value: "100" }],
    });
    created.push(strict);
    const messages: KafkaMessage[] = Array.from({ length: 48 }, (_, i) => ({
      topic: i % 2 === 0 ? good : strict,
      partition: i,
      key: b("k"),
      value: b(`{"n":${i}}`),
    }));

    // A topic just created may answer NOT_LEADER_OR_FOLLOWER first (retriable); then the refusal, which is not
    // (the agent stops on it). Each attempt sends only what was not acknowledged: the good topic's records stay
    // stored once.
    const apiIds = (error: Error) =>
      ((error as { errors?: Error[] }).errors ?? [error]).map((leaf) => (leaf as { apiId?: string }).apiId);
    const refusal = await waitFor(
      "the broker's MESSAGE_TOO_LARGE",
      async () => {
        const error = await rejectionOf(sender.send(messages), Error);
        return apiIds(error).includes("MESSAGE_TOO_LARGE") ? error : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(canRetrySend(refusal)).toBe(false);
    expect((await readTopic(brokers, good)).map((m) => m.value.toString()).sort()).toEqual(
      messages
        .filter((m) => m.topic === good)
        .map((m) => m.value?.toString() as string)
        .sort(),
    );

    await admin.incrementalAlterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: strict,
          configs: [
            { name: "max.message.bytes", configOperation: IncrementalAlterConfigOperationTypes.SET, value: "1048588" },
          ],
        },
      ],
    });
    await sendAll(messages);

    const stored = [...(await readTopic(brokers, good)), ...(await readTopic(brokers, strict))];
    expect(stored.map((m) => m.value.toString()).sort()).toEqual(
      messages.map((m) => m.value?.toString() as string).sort(),
    );
  });
});
