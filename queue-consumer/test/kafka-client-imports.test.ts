import { expect, test } from "bun:test";
import { packageImports } from "@svc/testkit";

// As the agent's (agent/test/kafka-client-imports.test.ts): the writer imports the consumer's half of
// @platformatic/kafka, not its root module, which loads and compiles every client's option validators.
test("the writer loads the Kafka consumer and none of the admin client, the producer or the registries", async () => {
  const entry = new URL("../src/queue-consumer.ts", import.meta.url).pathname;
  const kafka = await packageImports(entry, "@platformatic/kafka");
  expect(kafka).toContain("dist/clients/consumer/consumer.js");
  expect(
    kafka.filter((path) => /^dist\/(index\.js|clients\/(admin|producer)\/|registries\/confluent)/.test(path)),
  ).toEqual([]);
});
