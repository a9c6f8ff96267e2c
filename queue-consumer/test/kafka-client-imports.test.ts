import { describe, expect, test } from "bun:test";
import { staticImports } from "@svc/testkit";

// As the agent's (agent/test/kafka-client-imports.test.ts): the writer imports the consumer's half of
// @platformatic/kafka, not its root module, which loads and compiles every client's option validators.
describe("the writer's Kafka client", () => {
  test("loads the consumer and none of the admin client, the producer or the schema registries", async () => {
    const kafka = (await staticImports(new URL("../src/queue-consumer.ts", import.meta.url).pathname))
      .filter((path) => path.includes("/@platformatic/kafka/dist/"))
      .map((path) => path.slice(path.indexOf("/dist/") + 1));
    expect(kafka).toContain("dist/clients/consumer/consumer.js");
    expect(kafka.filter((path) => /^dist\/(clients\/(admin|producer)\/|registries\/confluent)/.test(path))).toEqual([]);
    expect(kafka).not.toContain("dist/index.js");
  });
});
