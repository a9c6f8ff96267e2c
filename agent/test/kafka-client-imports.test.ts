import { describe, expect, test } from "bun:test";
import { staticImports } from "@svc/testkit";

// @platformatic/kafka's root module loads every client, each compiling its option validators (ajv) as it loads:
// ~0.2 s and ~12 MiB the agent never uses. The agent imports the producer's half through the subpaths our patch of
// the package's exports adds (README.md, "Kafka client").
describe("the agent's Kafka client", () => {
  test("loads the producer and none of the admin client, the consumer or the schema registries", async () => {
    const kafka = (await staticImports(new URL("../src/agent.ts", import.meta.url).pathname))
      .filter((path) => path.includes("/@platformatic/kafka/dist/"))
      .map((path) => path.slice(path.indexOf("/dist/") + 1));
    expect(kafka).toContain("dist/clients/producer/producer.js");
    expect(kafka.filter((path) => /^dist\/(clients\/(admin|consumer)\/|registries\/confluent)/.test(path))).toEqual([]);
    expect(kafka).not.toContain("dist/index.js");
  });
});
