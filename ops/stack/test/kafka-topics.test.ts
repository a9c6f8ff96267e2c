import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ConfigResourceTypes } from "@platformatic/kafka";
import { waitFor } from "@svc/common";
import { describeWithServers, randomName, rejectionOf } from "@svc/testkit";
import type { StackContext } from "../src/context.ts";
import { livePid } from "../src/daemon.ts";
import { StackError } from "../src/errors.ts";
import { freePort } from "../src/free-port.ts";
import { onlyAlreadyExists, stackKafkaAdmin } from "../src/kafka-topics.ts";
import { down, type StackUp, selectServices, up } from "../src/stack.ts";
import { pidFileOf } from "../src/state-files.ts";
import { testContext } from "./support/fake-service.ts";

// The shapes @platformatic/kafka rejects createTopics with: MultipleErrors > ResponseError > ProtocolError per topic.
const protocol = (apiId: string) => Object.assign(new Error(apiId), { apiId });
const nest = (...errors: Error[]) => Object.assign(new Error("Creating topics failed."), { errors });

test("TOPIC_ALREADY_EXISTS for every refused topic is not a failure", () => {
  expect(onlyAlreadyExists(nest(nest(protocol("TOPIC_ALREADY_EXISTS"), protocol("TOPIC_ALREADY_EXISTS"))))).toBe(true);
});

test("any other refusal, or a connection error, is a failure", () => {
  expect(onlyAlreadyExists(nest(nest(protocol("TOPIC_ALREADY_EXISTS"), protocol("INVALID_TOPIC_EXCEPTION"))))).toBe(
    false,
  );
  expect(onlyAlreadyExists(nest(new Error("connect ECONNREFUSED")))).toBe(false);
  expect(onlyAlreadyExists(new Error("no errors inside"))).toBe(false);
});

// Starts a real Kafka: not registered under SVC_TEST_NO_STACK=1 (testkit/README.md).
describeWithServers("Kafka topics and settings on a private broker", () => {
  // One private broker for the file: free ports, its own state directory, a heap other than the default.
  const HEAP_MB = 320;
  let ctx: StackContext;
  let first: StackUp;

  beforeAll(async () => {
    ctx = testContext({
      SVC_STACK_KAFKA_PORT: String(await freePort()),
      SVC_STACK_KAFKA_CONTROLLER_PORT: String(await freePort()),
      SVC_STACK_KAFKA_HEAP_MB: String(HEAP_MB),
      // A stray JVM option in the caller's shell must not reach the broker.
      JAVA_TOOL_OPTIONS: "-Dsvc.stray=1",
    });
    first = await up(ctx, selectServices(["kafka"]));
  });

  afterAll(async () => {
    await down(ctx, { purge: true });
  });

  /** Partition counts as the broker's metadata shows them (a topic created moments ago may take a moment to show). */
  async function partitionCounts(topics: string[]): Promise<Record<string, number>> {
    const admin = stackKafkaAdmin(ctx, "kafka-topics-test");
    try {
      return await waitFor(
        `metadata of ${topics.join(", ")}`,
        async () => {
          const metadata = await admin.metadata({ topics, forceUpdate: true });
          return Object.fromEntries(topics.map((t) => [t, metadata.topics.get(t)?.partitionsCount ?? 0]));
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
    } finally {
      await admin.close();
    }
  }

  test("up creates the configured topics and their dead-letter topics with topic_partitions partitions", async () => {
    expect(first.timings).toEqual([expect.objectContaining({ name: "kafka", alreadyRunning: false })]);
    const { topics, topic_partitions } = ctx.config.kafka;
    expect(topics).toContain("svc.kms.audit.events.v1.dlq");
    const expected = Object.fromEntries(topics.map((t) => [t, topic_partitions]));
    expect(await partitionCounts(topics)).toEqual(expected);
  });

  test("the broker runs with the configured heap, and without the shell's JAVA_TOOL_OPTIONS", () => {
    const pid = livePid(pidFileOf(ctx, "kafka"));
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(args).toContain(`-Xms${HEAP_MB}m`);
    expect(args).toContain(`-Xmx${HEAP_MB}m`);
    expect(args.filter((a) => a.startsWith("-Xmx"))).toEqual([`-Xmx${HEAP_MB}m`]);
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    expect(environ.filter((e) => e.startsWith("JAVA_TOOL_OPTIONS="))).toEqual([]);
  });

  test("the broker's internal topics and retention are the dev-machine settings", async () => {
    const admin = stackKafkaAdmin(ctx, "kafka-topics-test");
    try {
      const [broker] = await admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: "1" }],
      });
      const value = (name: string) => broker?.configs.find((c) => c.name === name)?.value;
      expect(value("offsets.topic.num.partitions")).toBe("4");
      expect(value("transaction.state.log.num.partitions")).toBe("4");
      expect(value("log.retention.bytes")).toBe(String(ctx.config.kafka.retention_bytes));
      expect(value("log.segment.bytes")).toBe(String(ctx.config.kafka.segment_bytes));
      expect(value("log.retention.hours")).toBe(String(ctx.config.kafka.retention_hours));
    } finally {
      await admin.close();
    }
  });

  test("a second up leaves existing topics as they are and creates only the missing ones", async () => {
    const existing = randomName("stack-existing");
    const added = randomName("stack-added");
    const admin = stackKafkaAdmin(ctx, "kafka-topics-test");
    try {
      await admin.createTopics({ topics: [existing], partitions: 2, replicas: 1 });
    } finally {
      await admin.close();
    }
    ctx.config.kafka.topics = [...ctx.config.kafka.topics, existing, added];
    const again = await up(ctx, selectServices(["kafka"]));
    expect(again.timings).toEqual([expect.objectContaining({ name: "kafka", alreadyRunning: true })]);
    expect(await partitionCounts([existing, added])).toEqual({
      [existing]: 2,
      [added]: ctx.config.kafka.topic_partitions,
    });
  });

  test("a topic the broker refuses fails `up` with STACK_START_FAILED, and the running broker is left running", async () => {
    const pid = livePid(pidFileOf(ctx, "kafka"));
    const bad = { ...ctx, config: { ...ctx.config, kafka: { ...ctx.config.kafka, topics: ["not a topic name!"] } } };
    const error = await rejectionOf(up(bad, selectServices(["kafka"])), StackError);
    expect(error.code).toBe("STACK_START_FAILED");
    expect(error.subject).toBe("kafka");
    expect(livePid(pidFileOf(ctx, "kafka"))).toBe(pid);
  });
});
