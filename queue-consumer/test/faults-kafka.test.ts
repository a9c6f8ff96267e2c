import { afterAll, beforeAll, expect, test } from "bun:test";
import { describeWithServers, type PrivateServers, startPrivateServers, waitFor } from "@svc/testkit";
import { SQL } from "bun";
import { type BatchWritten, type QueueConsumer, startConsumer } from "../index.ts";
import {
  type Addresses,
  consumerConfig,
  createTopic,
  deleteTopic,
  dropSchema,
  indexFacts,
  makeLines,
  stackAddresses,
  TestProducer,
  testNames,
} from "./helpers.ts";

describeWithServers("queue-consumer with a private Kafka broker (restarted)", () => {
  const shared = stackAddresses();
  const sql = new SQL({ url: shared.pgUrl, max: 2 });
  let server: PrivateServers;
  let addresses: Addresses;
  let producer: TestProducer;
  const schemas: string[] = [];
  const topics: string[] = [];
  const consumers: QueueConsumer[] = [];

  beforeAll(async () => {
    server = await startPrivateServers(["kafka"]);
    addresses = {
      ...shared,
      brokers: server.env.SVC_STACK_KAFKA_BROKERS ?? "",
    };
    producer = new TestProducer(addresses.brokers);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(consumers.map((c) => c.stop()));
    await producer?.close().catch(() => {});
    for (const topic of topics) await deleteTopic(addresses.brokers, topic);
    for (const schema of schemas) await dropSchema(sql, schema);
    await sql.close();
    await server?.remove();
  }, 120_000);

  async function consumerFor(purpose: string) {
    const names = testNames(purpose);
    schemas.push(names.schema);
    topics.push(names.topic);
    await createTopic(addresses.brokers, names.topic, 6);
    const consumer = await startConsumer(consumerConfig(addresses, names, { SVC_AUDIT_LOG_LEVEL: "error" }));
    consumers.push(consumer);
    return { names, consumer };
  }

  test("the Kafka broker restarted while records flow: every id indexed", async () => {
    const { names, consumer } = await consumerFor("kafka");
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    const lines = makeLines(2000);
    await producer.send(names.topic, lines.slice(0, 1000));
    await waitFor("first batches durable", async () => (batches.length > 0 ? true : undefined), { timeoutMs: 30_000 });
    await server.stop();
    await server.start();
    await producer.send(names.topic, lines.slice(1000));
    const facts = await waitFor(
      "every id indexed",
      async () => {
        const f = await indexFacts(sql, names.schema);
        return f.distinctIds >= lines.length ? f : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(facts).toMatchObject({ events: 2000, distinctIds: 2000, counted: 2000 });
  }, 180_000);
});
