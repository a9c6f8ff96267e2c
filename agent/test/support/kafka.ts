import { Admin, Consumer, type Message } from "@platformatic/kafka";
import { randomName, topicName } from "@svc/testkit";

/** A random topic and its `.dlq`, 6 partitions each, on the given brokers; `remove()` deletes both. */
export interface TestTopics {
  topic: string;
  dlq: string;
  remove(): Promise<void>;
}

function admin(brokers: string[]): Admin {
  return new Admin({ clientId: randomName("agent-test-admin"), bootstrapBrokers: brokers });
}

export async function createTopics(brokers: string[], purpose = "agent"): Promise<TestTopics> {
  const topic = topicName(purpose);
  const dlq = `${topic}.dlq`;
  await createTopic(brokers, topic);
  await createTopic(brokers, dlq);
  return {
    topic,
    dlq,
    remove: () => removeTopics(brokers, [topic, dlq]),
  };
}

export async function createTopic(brokers: string[], topic: string, partitions = 6): Promise<void> {
  const client = admin(brokers);
  try {
    await client.createTopics({ topics: [topic], partitions, replicas: 1 });
  } finally {
    await client.close();
  }
}

export async function removeTopics(brokers: string[], topics: string[]): Promise<void> {
  const client = admin(brokers);
  try {
    await client.deleteTopics({ topics });
  } finally {
    await client.close();
  }
}

/**
 * Every message of `topic` from the start up to its end at the time of the call (read by a consumer group of its
 * own, nothing committed).
 */
export async function readTopic(brokers: string[], topic: string): Promise<Message<Buffer, Buffer, Buffer, Buffer>[]> {
  const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
    clientId: randomName("agent-test-reader"),
    groupId: randomName("agent-test-reader"),
    bootstrapBrokers: brokers,
  });
  try {
    // From each partition's log start to its end: records below it (deleted by retention, or by deleteRecords)
    // would be waited for forever.
    const ends = (await consumer.listOffsets({ topics: [topic] })).get(topic) ?? [];
    const starts = (await consumer.listOffsets({ topics: [topic], timestamp: -2n })).get(topic) ?? [];
    const remaining = new Map<number, bigint>();
    ends.forEach((end, partition) => {
      if (end > (starts[partition] ?? 0n)) remaining.set(partition, end);
    });
    const messages: Message<Buffer, Buffer, Buffer, Buffer>[] = [];
    if (remaining.size === 0) return messages;
    const offsets = [...remaining.keys()].map((partition) => ({ topic, partition, offset: starts[partition] ?? 0n }));
    const stream = await consumer.consume({
      topics: [topic],
      mode: "manual",
      offsets,
      autocommit: false,
      maxWaitTime: 200,
    });
    try {
      for await (const message of stream) {
        const end = remaining.get(message.partition);
        if (end === undefined || message.offset >= end) continue;
        messages.push(message);
        if (message.offset + 1n >= end) remaining.delete(message.partition);
        if (remaining.size === 0) break;
      }
    } finally {
      await stream.close();
    }
    return messages;
  } finally {
    await consumer.close(true);
  }
}

/** How many messages `topic` holds (sum of the partitions' end offsets; the topics of a test are never compacted). */
export async function countMessages(brokers: string[], topic: string): Promise<number> {
  const consumer = new Consumer({
    clientId: randomName("agent-test-count"),
    groupId: "unused",
    bootstrapBrokers: brokers,
  });
  try {
    const ends = (await consumer.listOffsets({ topics: [topic] })).get(topic) ?? [];
    return ends.reduce((sum, end) => sum + Number(end), 0);
  } finally {
    await consumer.close(true);
  }
}

/** The `id` of each message's JSON value, and how often each one occurs. */
export function idCounts(messages: Message<Buffer, Buffer, Buffer, Buffer>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of messages) {
    const id = (JSON.parse(message.value.toString("utf8")) as { id: string }).id;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

export const headerText = (message: Message<Buffer, Buffer, Buffer, Buffer>, name: string): string | undefined => {
  for (const [key, value] of message.headers) if (key.toString() === name) return value.toString();
  return undefined;
};
