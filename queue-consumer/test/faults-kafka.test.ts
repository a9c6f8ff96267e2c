import { expect, test } from "bun:test";
import { describeWithServers, waitFor } from "@svc/testkit";
import type { BatchWritten } from "../index.ts";
import { faultHarness } from "./fault-harness.ts";
import { makeLines, waitAllIndexed } from "./helpers.ts";

describeWithServers("queue-consumer with a private Kafka broker (restarted)", () => {
  const harness = faultHarness(["kafka"]);
  const { sql, consumerFor } = harness;

  test("the Kafka broker restarted while records flow: every id indexed", async () => {
    const { names, consumer } = await consumerFor("kafka");
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    const lines = makeLines(2000);
    await harness.producer.send(names.topic, lines.slice(0, 1000));
    await waitFor("first batches durable", async () => (batches.length > 0 ? true : undefined), { timeoutMs: 30_000 });
    await harness.server.stop();
    await harness.server.start();
    await harness.producer.send(names.topic, lines.slice(1000));
    const facts = await waitAllIndexed(sql, names.schema, lines.length, 90_000);
    expect(facts).toMatchObject({ events: 2000, distinctIds: 2000, counted: 2000 });
  }, 180_000);
});
