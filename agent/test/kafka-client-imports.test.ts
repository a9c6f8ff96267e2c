import { expect, test } from "bun:test";
import { packageImports } from "@svc/testkit";

// @platformatic/kafka's root module loads every client, each compiling its option validators (ajv) as it loads:
// ~0.2 s and ~12 MiB the agent never uses. The agent imports the producer's half through the subpaths our patch of
// the package's exports adds (README.md, "Kafka client").
test("the agent loads the Kafka producer and none of the admin client, the consumer or the schema registries", async () => {
  const kafka = await packageImports(new URL("../src/agent.ts", import.meta.url).pathname, "@platformatic/kafka");
  expect(kafka).toContain("dist/clients/producer/producer.js");
  expect(
    kafka.filter((path) => /^dist\/(index\.js|clients\/(admin|consumer)\/|registries\/confluent)/.test(path)),
  ).toEqual([]);
});
