import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Admin, Producer, stringSerializers } from "@platformatic/kafka";
import { randomName, stackEnv } from "@svc/testkit";
import { createTopics, readTopic, type TestTopics } from "./support/kafka.ts";

const brokers = stackEnv().kafkaBrokers;
let topics: TestTopics;

beforeAll(async () => {
  topics = await createTopics(brokers, "agent-read");
});
afterAll(async () => {
  await topics.remove();
});

describe("readTopic (the tests' reader, real Kafka)", () => {
  // The broker deletes records older than the topic's retention at its next check (every 60 s on the stack): a
  // partition may start past offset 0, and a reader from offset 0 would wait for the deleted records forever.
  test("reads each partition from its log start: records deleted below it are not waited for", async () => {
    const producer = new Producer({
      clientId: randomName("agent-read-producer"),
      bootstrapBrokers: brokers,
      serializers: stringSerializers,
      // A send retried on a just-started broker (leaders still moving) would store a record twice without it.
      idempotent: true,
    });
    try {
      await producer.send({
        messages: [
          { topic: topics.topic, partition: 0, value: "p0-a" },
          { topic: topics.topic, partition: 0, value: "p0-b" },
          { topic: topics.topic, partition: 0, value: "p0-c" },
          { topic: topics.topic, partition: 1, value: "p1-a" },
          { topic: topics.topic, partition: 2, value: "p2-a" },
        ],
      });
    } finally {
      await producer.close();
    }
    const admin = new Admin({ clientId: randomName("agent-read-admin"), bootstrapBrokers: brokers });
    try {
      await admin.deleteRecords({
        topics: [
          {
            name: topics.topic,
            partitions: [
              { partition: 0, offset: 2n },
              { partition: 2, offset: 1n },
            ],
          },
        ],
      });
    } finally {
      await admin.close();
    }

    const messages = await readTopic(brokers, topics.topic);

    expect(messages.map((m) => `${m.partition}:${m.offset}:${m.value.toString()}`).sort()).toEqual([
      "0:2:p0-c",
      "1:0:p1-a",
    ]);
  });
});
