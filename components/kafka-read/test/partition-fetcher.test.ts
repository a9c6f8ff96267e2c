import { afterAll, describe, expect, test } from "bun:test";
import { Admin, Producer } from "@platformatic/kafka";
import { Consumer } from "@platformatic/kafka/clients/consumer";
import { randomName, stackEnv, waitFor } from "@svc/testkit";
import type { KafkaReadError } from "../src/errors.ts";
import { PartitionFetcher } from "../src/partition-fetcher.ts";

// Fetching against the stack's broker: positions from the group's commits (the queue consumer) or given by the
// caller (the audit API's tail), records read in place (plain and gzip batches), partitions taken away and given
// back, records deleted before they were read.
const brokers = stackEnv().kafkaBrokers;
const admin = new Admin({ clientId: "kafka-read-test", bootstrapBrokers: brokers });
const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
  clientId: "kafka-read-test",
  bootstrapBrokers: brokers,
  acks: -1,
});
const consumers: Consumer<Buffer, Buffer, Buffer, Buffer>[] = [];
const fetchers: PartitionFetcher[] = [];
const topics: string[] = [];

afterAll(async () => {
  await Promise.allSettled(fetchers.map((f) => f.close()));
  await Promise.allSettled(consumers.map((c) => c.close(true)));
  await producer.close();
  // One at a time: a test deletes its own topic, and a request naming it would fail for the others too.
  await Promise.allSettled(topics.map((topic) => admin.deleteTopics({ topics: [topic] })));
  await admin.close();
});

interface Fetched {
  offset: bigint;
  value: string;
}

async function setup(partitions = 3, options: { maxBytes?: number; leaderless?: number[] } = {}) {
  const topic = randomName("svc-test-fetcher");
  topics.push(topic);
  await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
  const groupId = randomName("kafka-read-test-group");
  // The group's client, not joined: the fetcher asks it for metadata, commits and the earliest offsets only.
  const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "kafka-read-test",
    bootstrapBrokers: brokers,
    groupId,
  });
  consumers.push(consumer);
  // A partition without a leader beside others with one cannot be made on a one-broker stack: the metadata the
  // fetcher is given says so for `leaderless` (the fetches themselves go to the real broker).
  const leaderless = new Set(options.leaderless ?? []);
  const client = {
    metadata: async (request: Parameters<typeof consumer.metadata>[0]) => {
      const metadata = await consumer.metadata(request);
      const held = metadata.topics.get(topic);
      if (held === undefined || leaderless.size === 0) return metadata;
      const partitions = held.partitions.map((p, i) => (leaderless.has(i) ? { ...p, leader: -1 } : p));
      return { ...metadata, topics: new Map(metadata.topics).set(topic, { ...held, partitions }) };
    },
    listCommittedOffsets: consumer.listCommittedOffsets.bind(consumer),
    listOffsets: consumer.listOffsets.bind(consumer),
  } as Pick<typeof consumer, "metadata" | "listCommittedOffsets" | "listOffsets">;
  const fetched = new Map<number, Fetched[]>();
  /** Partition of each record, in the order delivered. */
  const order: number[] = [];
  const failures: unknown[] = [];
  const retries: unknown[] = [];
  const fetcher = new PartitionFetcher(client, {
    clientId: "kafka-read-test",
    topic,
    maxWaitMs: 100,
    maxBytes: options.maxBytes ?? 1024 * 1024,
    requestTimeoutMs: 5_000,
    retries: 2,
    retryDelayMs: 50,
    onRecord: (partition, offset, _timestampMs, value) => {
      const list = fetched.get(partition) ?? [];
      list.push({ offset, value: value.toString() });
      fetched.set(partition, list);
      order.push(partition);
    },
    onFailure: (error) => failures.push(error),
    onRetry: (error) => retries.push(error),
  });
  fetchers.push(fetcher);
  const send = (partition: number, values: string[], compression: "none" | "gzip" = "none") =>
    producer.send({
      messages: values.map((value) => ({ topic, partition, value: Buffer.from(value) })),
      compression,
    });
  const commit = (partition: number, offset: bigint) =>
    admin.alterConsumerGroupOffsets({ groupId, topics: [{ name: topic, partitionOffsets: [{ partition, offset }] }] });
  const fetchedOf = (partition: number) => fetched.get(partition) ?? [];
  const until = (what: string, ok: () => boolean) =>
    waitFor(what, async () => (ok() ? true : undefined), { timeoutMs: 20_000, intervalMs: 20 });
  return { topic, groupId, fetcher, failures, retries, order, send, commit, fetchedOf, until };
}

const values = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe("PartitionFetcher", () => {
  test("each assigned partition from its commit, or from the start without one; gzip batches as plain ones", async () => {
    const { fetcher, failures, send, commit, fetchedOf, until } = await setup();
    await send(0, values("p0", 5));
    await send(1, values("p1", 5), "gzip");
    await commit(0, 2n);
    fetcher.assign(new Set([0, 1, 2]));
    await until(
      "p0 from its commit and p1 from the start",
      () => fetchedOf(0).length === 3 && fetchedOf(1).length === 5,
    );
    expect(fetchedOf(0)).toEqual([
      { offset: 2n, value: "p0-2" },
      { offset: 3n, value: "p0-3" },
      { offset: 4n, value: "p0-4" },
    ]);
    expect(fetchedOf(1).map((r) => [r.offset, r.value])).toEqual(values("p1", 5).map((v, i) => [BigInt(i), v]));
    await send(2, ["p2-0"]);
    await until("a record sent after the start", () => fetchedOf(2).length === 1);
    expect(fetchedOf(2)).toEqual([{ offset: 0n, value: "p2-0" }]);
    expect(failures).toEqual([]);
  });

  test("a partition taken away is not fetched; given back, it is read again from its commit, not from where it was", async () => {
    const { fetcher, send, commit, fetchedOf, until } = await setup();
    await send(0, values("p0", 5));
    await send(1, values("p1", 2));
    await commit(0, 2n);
    fetcher.assign(new Set([0, 1]));
    await until("both read", () => fetchedOf(0).length === 3 && fetchedOf(1).length === 2);
    fetcher.assign(new Set([1]));
    // One answer holds both partitions when both are fetched: p1's new record arriving alone shows p0 was not asked for.
    await send(0, ["p0-late"]);
    await send(1, ["p1-late"]);
    await until("p1's new record", () => fetchedOf(1).length === 3);
    expect(fetchedOf(0)).toHaveLength(3);
    fetcher.assign(new Set([0, 1]));
    await until("p0 again", () => fetchedOf(0).length === 7);
    // From the commit (2), not from 5 where this fetcher had stopped: another member may have held it meanwhile.
    expect(fetchedOf(0).map((r) => r.offset)).toEqual([2n, 3n, 4n, 2n, 3n, 4n, 5n]);
    expect(fetchedOf(0).at(-1)?.value).toBe("p0-late");
  });

  test("assigned again while its position is being looked up: the new lookup serves it", async () => {
    const { fetcher, send, commit, fetchedOf, until } = await setup(2);
    await send(0, values("p0", 3));
    await send(1, values("p1", 1));
    await commit(0, 1n);
    fetcher.assign(new Set([0]));
    fetcher.assign(new Set([0, 1])); // before the first lookup could answer: it is abandoned
    await until("both read", () => fetchedOf(0).length === 2 && fetchedOf(1).length === 1);
    expect(fetchedOf(0).map((r) => r.offset)).toEqual([1n, 2n]);
  });

  test("records deleted before they were read: fetching goes on from the oldest record kept", async () => {
    const { topic, fetcher, failures, send, commit, fetchedOf, until } = await setup();
    await send(2, values("p2", 6));
    await commit(2, 0n);
    await admin.deleteRecords({ topics: [{ name: topic, partitions: [{ partition: 2, offset: 4n }] }] });
    fetcher.assign(new Set([2]));
    await until("the records kept", () => fetchedOf(2).length === 2);
    expect(fetchedOf(2)).toEqual([
      { offset: 4n, value: "p2-4" },
      { offset: 5n, value: "p2-5" },
    ]);
    expect(failures).toEqual([]);
  });

  test("assignAt: each partition from the offset given or the earliest kept, replacing what it held; no group made", async () => {
    const { topic, groupId, fetcher, failures, send, commit, fetchedOf, until } = await setup();
    await send(0, values("p0", 5));
    await send(1, values("p1", 4));
    await send(2, values("p2", 3));
    await commit(0, 4n); // a commit is not a position here: the offsets given are
    await admin.deleteRecords({ topics: [{ name: topic, partitions: [{ partition: 1, offset: 2n }] }] });
    fetcher.assignAt(
      new Map<number, bigint | undefined>([
        [0, 1n],
        [1, undefined],
      ]),
    );
    await until("p0 from 1 and p1 from its earliest", () => fetchedOf(0).length === 4 && fetchedOf(1).length === 2);
    expect(fetchedOf(0).map((r) => r.offset)).toEqual([1n, 2n, 3n, 4n]);
    expect(fetchedOf(1)).toEqual([
      { offset: 2n, value: "p1-2" },
      { offset: 3n, value: "p1-3" },
    ]);
    fetcher.assignAt(new Map([[2, 2n]]));
    await send(0, ["p0-late"]);
    await send(2, ["p2-late"]);
    await until("p2 from 2", () => fetchedOf(2).length === 2);
    expect(fetchedOf(2).map((r) => r.value)).toEqual(["p2-2", "p2-late"]);
    expect(fetchedOf(0)).toHaveLength(4); // no longer read
    expect(failures).toEqual([]);
    // The client named a group (the commit above made it exist), but nothing joined it.
    const group = (await admin.describeGroups({ groups: [groupId] })).get(groupId);
    expect(group?.members.size ?? 0).toBe(0);
  });

  test("partitions with a backlog share the answers: one answered with records is named last in the next fetch", async () => {
    // Each answer holds at most 64 KiB; each partition holds ~300 KiB in batches of ~10 KiB.
    const { fetcher, order, send, until } = await setup(2, { maxBytes: 64 * 1024 });
    for (let k = 0; k < 30; k += 1) {
      await send(
        0,
        values(`p0-${k}`, 10).map((v) => v.padEnd(1_000)),
      );
      await send(
        1,
        values(`p1-${k}`, 10).map((v) => v.padEnd(1_000)),
      );
    }
    fetcher.assignAt(
      new Map([
        [0, 0n],
        [1, 0n],
      ]),
    );
    await until("every record", () => order.length === 600);
    // Asked first every time, partition 0 would fill every answer until its 300 records were read.
    const first = order.slice(0, 200);
    expect(first.filter((p) => p === 1).length).toBeGreaterThan(50);
    expect(first.filter((p) => p === 0).length).toBeGreaterThan(50);
  });

  test("a partition without a leader is left out, once reported; the others are read", async () => {
    const { fetcher, failures, retries, send, fetchedOf, until } = await setup(2, { leaderless: [1] });
    await send(0, ["a", "b"]);
    await send(1, ["c"]);
    fetcher.assignAt(
      new Map([
        [0, 0n],
        [1, 0n],
      ]),
    );
    await until("partition 0's records", () => fetchedOf(0).length === 2);
    await send(0, ["d"]);
    await until("a record sent later", () => fetchedOf(0).length === 3);
    expect(fetchedOf(1)).toEqual([]);
    expect(failures).toEqual([]);
    expect(retries).toHaveLength(1);
    expect((retries[0] as KafkaReadError).code).toBe("KAFKA_READ_FETCH_FAILED");
    expect((retries[0] as Error).message).toContain("no leader known for partitions 1");
  });

  test("paused and resumed, it reads what came meanwhile", async () => {
    const { fetcher, send, fetchedOf, until } = await setup(1);
    await send(0, ["a"]);
    fetcher.assign(new Set([0]));
    await until("the first record", () => fetchedOf(0).length === 1);
    fetcher.pause();
    await send(0, ["b"]);
    fetcher.resume();
    await until("the record sent while paused", () => fetchedOf(0).length === 2);
    expect(fetchedOf(0).map((r) => r.value)).toEqual(["a", "b"]);
  });

  test("fetching that keeps failing (its topic deleted) stops after its retries and reports it", async () => {
    const { topic, fetcher, failures, send, fetchedOf, until } = await setup(1);
    await send(0, ["a"]);
    fetcher.assign(new Set([0]));
    await until("the first record", () => fetchedOf(0).length === 1);
    await admin.deleteTopics({ topics: [topic] });
    await until("the failure reported", () => failures.length > 0);
    expect(failures).toHaveLength(1);
    expect((failures[0] as KafkaReadError).code).toBe("KAFKA_READ_FETCH_FAILED");
    expect((failures[0] as KafkaReadError).canRetry).toBe(true);
  });
});
