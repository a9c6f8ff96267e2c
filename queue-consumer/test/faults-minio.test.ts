import { expect, test } from "bun:test";
import { describeWithServers, waitFor } from "@svc/testkit";
import type { BatchWritten, QueueConsumerError } from "../index.ts";
import { faultHarness } from "./fault-harness.ts";
import { committedOffsets, makeLines, stackAddresses, waitAllIndexed } from "./helpers.ts";

describeWithServers("queue-consumer with a private MinIO (stopped and started again)", () => {
  const harness = faultHarness(["minio"]);
  const { sql, consumerFor } = harness;
  // This block's Kafka is the shared stack's (only MinIO is private).
  const { brokers } = stackAddresses();

  test("MinIO stopped and restarted while records flow: nothing committed while it is down, nothing lost", async () => {
    // Small batches: 64 KiB, so 256 KiB buffered pauses fetching while S3 is down.
    const { names, consumer } = await consumerFor("minio", { SVC_AUDIT_BATCH_MAX_BYTES: "65536" });
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    let putRetries = 0;
    consumer.events.on("put-retry", () => {
      putRetries += 1;
    });
    const lines = makeLines(3000);
    await harness.producer.send(names.topic, lines.slice(0, 500));
    await waitFor("first batches durable", async () => (batches.length > 0 ? true : undefined), { timeoutMs: 30_000 });

    await harness.server.stop();
    const sending = harness.producer.send(names.topic, lines.slice(500, 2000), 100);
    await waitFor("PUTs failing", async () => (putRetries >= 3 ? true : undefined), { timeoutMs: 30_000 });
    const durableWhileDown = batches.length;
    // The group's offsets in Kafka itself, not only the writer's own events: nothing may be committed from here on.
    const committedWhileDown = await committedOffsets(brokers, names.groupId, names.topic);
    expect(committedWhileDown.some((offset) => offset > 0n)).toBe(true);
    await sending;
    // Memory stays bounded: fetching paused, the buffer near its cap (one fetch answer may overshoot it).
    await waitFor(
      "fetching paused",
      async () =>
        (await consumer.metrics.registry.getSingleMetric("svc_audit_writer_fetch_paused")?.get())?.values[0]?.value ===
        1
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );
    expect(consumer.bufferedBytes()).toBeLessThan(256 * 1024 + 4 * 1024 * 1024);
    await waitFor("more PUTs failing", async () => (putRetries >= 12 ? true : undefined), { timeoutMs: 30_000 });
    // While S3 is down no batch completes, so no offset is committed.
    expect(batches.length).toBe(durableWhileDown);
    expect(await committedOffsets(brokers, names.groupId, names.topic)).toEqual(committedWhileDown);

    await harness.server.start();
    await harness.producer.send(names.topic, lines.slice(2000));
    const facts = await waitAllIndexed(sql, names.schema, lines.length, 60_000);
    expect(facts).toMatchObject({ events: 3000, distinctIds: 3000, counted: 3000, posted: 3000, strays: 0 });
  }, 150_000);

  test("MinIO frozen (SIGSTOP): a PUT without an answer times out and is retried; after SIGCONT nothing is lost", async () => {
    const { names, consumer } = await consumerFor("frozen", {
      SVC_AUDIT_BATCH_MAX_BYTES: "65536",
      SVC_AUDIT_S3_PUT_TIMEOUT_MS: "1000",
    });
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    const retries: QueueConsumerError[] = [];
    consumer.events.on("put-retry", (error) => retries.push(error));
    const lines = makeLines(1200);
    await harness.producer.send(names.topic, lines.slice(0, 300));
    await waitFor("first batches durable", async () => (batches.length > 0 ? true : undefined), { timeoutMs: 30_000 });

    // A stopped process keeps its listening socket: connections are accepted and never answered, the failure a
    // hung S3 endpoint or a dead load balancer gives. Without a time limit the PUT would wait forever.
    const pid = harness.server.pidOf("minio");
    process.kill(pid, "SIGSTOP");
    try {
      await harness.producer.send(names.topic, lines.slice(300, 900), 100);
      const timedOut = await waitFor(
        "PUTs timing out",
        async () => {
          const late = retries.filter((e) => e.code === "QUEUE_CONSUMER_PUT_TIMEOUT");
          return late.length >= 2 ? late : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(timedOut[0]?.canRetry).toBe(true);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await harness.producer.send(names.topic, lines.slice(900));
    const facts = await waitAllIndexed(sql, names.schema, lines.length, 60_000);
    expect(facts).toMatchObject({ events: 1200, distinctIds: 1200, counted: 1200, posted: 1200, strays: 0 });
    await consumer.stop();
  }, 150_000);
});
