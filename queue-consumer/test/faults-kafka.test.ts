import { expect, test } from "bun:test";
import { describeWithServers, waitFor } from "@svc/testkit";
import type { BatchWritten } from "../index.ts";
import { faultHarness } from "./fault-harness.ts";
import { counted, holdIndexLock, indexWritesWaiting, makeLines, waitAllIndexed } from "./helpers.ts";

describeWithServers("queue-consumer with a private Kafka broker (restarted)", () => {
  const harness = faultHarness(["kafka"]);
  const { sql, consumerFor } = harness;

  test("the Kafka broker restarted while records flow: every id indexed", async () => {
    const { names, consumer } = await consumerFor("kafka");
    const batches: BatchWritten[] = [];
    consumer.events.on("batch", (b) => batches.push(b));
    // A pool larger than the run needs: the sender stops a few chunks after the restart.
    const lines = makeLines(40_000);
    await harness.producer.send(names.topic, lines.slice(0, 1000));
    await waitFor("first batches durable", async () => (batches.length > 0 ? true : undefined), { timeoutMs: 30_000 });
    // A sender that goes on across the restart, 50 records at a time, until 5 chunks were taken after it: a chunk
    // the stopped broker refused is sent again once it is back (a copy of one it took is an id stored twice, not lost).
    let restarted = false;
    let chunksAfterRestart = 0;
    let sent = 1000;
    const sender = (async () => {
      // A broker that never takes records again fails the test with the last refusal, not at its own timeout.
      const deadline = Date.now() + 90_000;
      while (chunksAfterRestart < 5 && sent < lines.length) {
        try {
          await harness.producer.send(names.topic, lines.slice(sent, sent + 50), 50);
          sent += 50;
          if (restarted) chunksAfterRestart += 1;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await Bun.sleep(100); // pacing while the broker is away, not a synchronisation
        }
        await Bun.sleep(10);
      }
    })();
    await waitFor("records flowing", async () => (sent >= 1200 ? true : undefined), { timeoutMs: 30_000 });
    await harness.server.stop();
    await harness.server.start();
    restarted = true;
    await sender;
    // Records flowed up to the stop and after the start (the pool was not used up before it).
    expect(chunksAfterRestart).toBe(5);
    const facts = await waitAllIndexed(sql, names.schema, sent, 90_000);
    expect(facts).toMatchObject({ events: sent, distinctIds: sent, counted: sent, posted: sent, strays: 0 });
  }, 180_000);

  test("a batch's commit meets a stopped broker: the session is replaced, stop() returns, and nothing is lost", async () => {
    // The client retries each request a bounded number of times; retried for ever, this commit never returned and
    // held its write, and stop(), for good (a client left with a closed coordinator connection did that in CI).
    const { names, consumer } = await consumerFor("kafka-down", { SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: "2000" });
    // The index transaction waits on this lock, so the batch reaches its commit only once the broker is gone.
    const lock = await holdIndexLock(sql, names.schema);
    const lines = makeLines(600);
    try {
      await harness.producer.send(names.topic, lines);
      await waitFor(
        "an index transaction waiting on the lock",
        async () => ((await indexWritesWaiting(sql, names.schema)) > 0 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      await harness.server.stop();
    } finally {
      await lock.release();
    }
    await waitFor(
      "the session replaced",
      async () => ((await counted(consumer.metrics.sessionRestarts)) > 0 ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    expect(await counted(consumer.metrics.commits)).toBe(0);
    let settled: string | undefined;
    consumer.stop().then(
      () => {
        settled = "stopped";
      },
      (error: { code?: string }) => {
        settled = error.code ?? String(error);
      },
    );
    expect(await waitFor("stop() settled", async () => settled, { timeoutMs: 60_000 })).toBe("stopped");

    await harness.server.start();
    await harness.consumerOn(names);
    const facts = await waitAllIndexed(sql, names.schema, lines.length, 90_000);
    expect(facts).toMatchObject({ events: 600, distinctIds: 600, counted: 600, posted: 600, strays: 0 });
  }, 240_000);

  test("the broker frozen past the session timeout: heartbeats stall, the session is replaced, nothing is lost", async () => {
    // SIGSTOP: the broker's connections stay open and its answers stop, so no request fails at once. The client
    // reports the heartbeats stalled once a session timeout (6 s) passed without one; only that listener replaces
    // the session this soon (the writer's fetch fails only after its 5 s timeout and 5 retries 500 ms apart, ~32 s).
    const { names, consumer } = await consumerFor("kafka-frozen", { SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000" });
    const lines = makeLines(600);
    await harness.producer.send(names.topic, lines.slice(0, 300));
    await waitAllIndexed(sql, names.schema, 300, 60_000);
    const broker = harness.server.pidOf("kafka");
    process.kill(broker, "SIGSTOP");
    try {
      await waitFor(
        "the session replaced while the broker is frozen",
        async () => ((await counted(consumer.metrics.sessionRestarts)) > 0 ? true : undefined),
        { timeoutMs: 15_000 },
      );
    } finally {
      process.kill(broker, "SIGCONT");
    }
    await harness.producer.send(names.topic, lines.slice(300));
    const facts = await waitAllIndexed(sql, names.schema, lines.length, 90_000);
    expect(facts).toMatchObject({ events: 600, distinctIds: 600, counted: 600, posted: 600, strays: 0 });
  }, 180_000);
});
