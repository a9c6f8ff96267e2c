import { afterAll, expect, test } from "bun:test";
import {
  Admin,
  Consumer,
  MessagesStreamModes,
  ProduceAcks,
  Producer,
  stringDeserializers,
  stringSerializers,
} from "@platformatic/kafka";
import { randomName, stackEnv, topicName } from "@svc/testkit";

const { kafkaBrokers } = stackEnv();
const admin = new Admin({ clientId: randomName("smoke-admin"), bootstrapBrokers: kafkaBrokers });
const topics: string[] = [];

afterAll(async () => {
  if (topics.length > 0) await admin.deleteTopics({ topics });
  await admin.close();
});

test("an idempotent producer with acks=all writes a message a consumer group reads back", async () => {
  const topic = topicName("smoke");
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  topics.push(topic);

  const producer = new Producer({
    clientId: randomName("smoke-producer"),
    bootstrapBrokers: kafkaBrokers,
    serializers: stringSerializers,
    idempotent: true,
    acks: ProduceAcks.ALL,
  });
  const value = JSON.stringify({ id: randomName("event"), action: "smoke" });
  try {
    const result = await producer.send({ messages: [{ topic, key: "k1", value }] });
    expect(result.offsets?.[0]?.offset).toBe(0n);
  } finally {
    await producer.close();
  }

  const consumer = new Consumer({
    clientId: randomName("smoke-consumer"),
    groupId: randomName("smoke-group"),
    bootstrapBrokers: kafkaBrokers,
    deserializers: stringDeserializers,
    autocommit: false,
    maxWaitTime: 500,
  });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST });
    let received: { key: string; value: string; offset: bigint } | undefined;
    for await (const message of stream) {
      received = { key: message.key, value: message.value, offset: message.offset };
      break;
    }
    await stream.close();
    expect(received).toEqual({ key: "k1", value, offset: 0n });
  } finally {
    await consumer.close(true);
  }
});
