import { describe, expect, test } from "bun:test";
import { waitFor } from "@svc/testkit";
import { type BatchWritten, type QueueConsumer, startConsumer } from "../index.ts";
import {
  consumerConfig,
  makeLines,
  type ProducedLine,
  pipelineFixture,
  spawnConsumer,
  type TestProducer,
  waitAllIndexed,
} from "./helpers.ts";

const started: QueueConsumer[] = [];
const { addresses, sql, names, producer } = pipelineFixture("scale", {
  partitions: 6,
  beforeTeardown: () => Promise.allSettled(started.map((c) => c.stop())),
});

const partitionsOf = (consumer: QueueConsumer) => consumer.assignedPartitions();

/** Sends `lines` 200 at a time, 50 ms apart (a steady load while a replica goes), telling `onSent` how many went. */
async function sendPaced(
  producer: TestProducer,
  topic: string,
  lines: readonly ProducedLine[],
  onSent: (sent: number) => void,
): Promise<void> {
  for (let i = 0; i < lines.length; i += 200) {
    await producer.send(topic, lines.slice(i, i + 200));
    onSent(i + 200);
    await Bun.sleep(50); // pacing the load, not synchronisation
  }
}

describe("two replicas in one group", () => {
  test("split the 6 partitions; stopping one under load hands its partitions over and every id is indexed", async () => {
    const config = consumerConfig(addresses, names);
    const a = await startConsumer(config);
    started.push(a);
    await waitFor("a owns 6", async () => (partitionsOf(a).length === 6 ? true : undefined), { timeoutMs: 20_000 });
    const b = await startConsumer(config);
    started.push(b);
    const split = await waitFor(
      "the partitions split",
      async () => {
        const [pa, pb] = [partitionsOf(a), partitionsOf(b)];
        return pa.length > 0 && pb.length > 0 && pa.length + pb.length === 6 ? { pa, pb } : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect([...split.pa, ...split.pb].sort()).toEqual([0, 1, 2, 3, 4, 5]);

    const writtenByB: BatchWritten[] = [];
    b.events.on("batch", (batch) => writtenByB.push(batch));
    const lines = makeLines(4000, 60); // 60 tenants: every partition gets records
    let sent = 0;
    const sending = sendPaced(producer, names.topic, lines, (n) => {
      sent = n;
    });
    await waitFor("a third sent", async () => (sent >= 1200 ? true : undefined), { timeoutMs: 20_000 });
    await a.stop();
    await waitFor("b owns 6", async () => (partitionsOf(b).length === 6 ? true : undefined), { timeoutMs: 30_000 });
    await sending;
    // a may have read to the end of some of its partitions while it stopped (the paced load ends within ~1 s):
    // records sent now are on every partition (60 tenants) and only b is left to write them.
    const after = makeLines(600, 60);
    await producer.send(names.topic, after);
    const facts = await waitAllIndexed(sql, names.schema, lines.length + after.length, 40_000);
    expect(facts).toMatchObject({ events: 4600, distinctIds: 4600, counted: 4600, posted: 4600, strays: 0 });
    // b wrote batches of partitions that were a's.
    const handedOver = new Set(writtenByB.map((w) => w.partition).filter((p) => split.pa.includes(p)));
    expect(handedOver.size).toBe(split.pa.length);
  }, 180_000);
});

describe("a replica killed with -9 under load", () => {
  const replicas: QueueConsumer[] = [];
  const crashed = pipelineFixture("scale-kill", {
    partitions: 6,
    beforeTeardown: () => Promise.allSettled(replicas.map((c) => c.stop())),
  });

  test("after its session timeout the other replica owns every partition, and every id is indexed", async () => {
    const { addresses, sql, names, producer } = crashed;
    // Replica a is its own process (so it can die mid-write), b is in this one (its assignment can be read).
    const a = spawnConsumer(addresses, names);
    try {
      const first = makeLines(300, 60);
      await producer.send(names.topic, first);
      await waitAllIndexed(sql, names.schema, first.length, 30_000);
      const b = await startConsumer(consumerConfig(addresses, names));
      replicas.push(b);
      const own = await waitFor(
        "b owns some partitions, a the others",
        async () => {
          const mine = partitionsOf(b);
          return mine.length > 0 && mine.length < 6 ? mine : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const writtenByB: BatchWritten[] = [];
      b.events.on("batch", (batch) => writtenByB.push(batch));
      const lines = makeLines(4000, 60);
      let sent = 0;
      const sending = sendPaced(producer, names.topic, lines, (n) => {
        sent = n;
      });
      await waitFor("a third sent", async () => (sent >= 1200 ? true : undefined), { timeoutMs: 20_000 });
      a.kill("SIGKILL");
      await a.exited;
      // No leave request from a: the group notices it only after its session timeout (6 s in these tests).
      await waitFor("b owns 6", async () => (partitionsOf(b).length === 6 ? true : undefined), { timeoutMs: 40_000 });
      await sending;
      const after = makeLines(600, 60);
      await producer.send(names.topic, after);
      const total = first.length + lines.length + after.length;
      const facts = await waitAllIndexed(sql, names.schema, total, 60_000);
      expect(facts).toMatchObject({ events: total, distinctIds: total, counted: total, posted: total, strays: 0 });
      // b wrote batches of every partition that was a's.
      const wasA = [0, 1, 2, 3, 4, 5].filter((p) => !own.includes(p));
      expect(new Set(writtenByB.map((w) => w.partition).filter((p) => wasA.includes(p))).size).toBe(wasA.length);
    } finally {
      a.kill("SIGKILL");
      await a.exited;
    }
  }, 180_000);
});
