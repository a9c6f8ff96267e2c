import { expect, test } from "bun:test";
import { Admin, ConfigResourceTypes } from "@platformatic/kafka";
import { randomName, stackEnv } from "@svc/testkit";
import { BenchTopics } from "../src/kafka-topics.ts";

test("a bench topic keeps every record until the run deletes it: no size or time retention of the broker's", async () => {
  const brokers = stackEnv().kafkaBrokers;
  const topics = new BenchTopics(brokers);
  const admin = new Admin({ clientId: "bench-topics-test", bootstrapBrokers: brokers });
  try {
    const name = await topics.create(randomName("bench-topic"), 2);
    const [topic] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: name }],
    });
    const value = (config: string) => topic?.configs.find((c) => c.name === config)?.value;
    expect(value("retention.bytes")).toBe("-1");
    expect(value("retention.ms")).toBe("-1");
  } finally {
    expect(await topics.cleanup()).toEqual([]);
    await admin.close();
  }
});

test("cleanup deletes a topic whose creation was still in flight, and refuses new ones after it began", async () => {
  const brokers = stackEnv().kafkaBrokers;
  const topics = new BenchTopics(brokers);
  const admin = new Admin({ clientId: "bench-topics-test", bootstrapBrokers: brokers });
  try {
    const name = randomName("bench-topic");
    const creating = topics.create(name, 1);
    const cleaning = topics.cleanup();
    expect(await creating).toBe(name);
    expect(await cleaning).toEqual([]);
    expect(await admin.listTopics()).not.toContain(name);
    expect(await topics.create(randomName("bench-topic"), 1).catch((error: unknown) => error)).toMatchObject({
      code: "BENCH_STEP_FAILED",
    });
  } finally {
    await admin.close();
  }
});
