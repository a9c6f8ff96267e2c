import { describe, expect, test } from "bun:test";
import { Admin } from "@platformatic/kafka";
import { randomName, waitFor } from "@svc/testkit";
import { type OffsetGap, OffsetGapWatch, type PartitionPosition, startConsumer } from "../index.ts";
import { consumerConfig, indexedIds, makeLines, pipelineFixture } from "./helpers.ts";

describe("OffsetGapWatch", () => {
  const watch = (positions: Record<number, PartitionPosition | Error>) => {
    const gaps: OffsetGap[] = [];
    const failures: unknown[] = [];
    const w = new OffsetGapWatch(
      async (partition) => {
        const position = positions[partition];
        if (position === undefined || position instanceof Error) throw position ?? new Error("no position");
        return position;
      },
      (gap) => gaps.push(gap),
      (error) => failures.push(error),
    );
    return { gaps, failures, w };
  };

  test("within a session: contiguous offsets are no gap, a skip is", async () => {
    const { gaps, w } = watch({ 0: { committed: 5n, logStart: 0n } });
    w.assigned([0]);
    await w.received(0, 5n);
    for (const offset of [6n, 7n, 8n]) await w.received(0, offset);
    expect(gaps).toEqual([]);
    await w.received(0, 12n);
    expect(gaps).toEqual([{ partition: 0, from: 9n, to: 12n }]);
  });

  test("a first record past the committed offset is a gap only when the log starts past it too", async () => {
    const { gaps, w } = watch({
      0: { committed: 30n, logStart: 40n }, // deleted by retention: lost
      1: { committed: 30n, logStart: 0n }, // committed later by the replica that had it: nothing lost
      2: { committed: -1n, logStart: 50n }, // the group never committed: nothing to compare
      3: { committed: 40n, logStart: 45n }, // the first record is the committed one
    });
    w.assigned([0, 1, 2, 3]);
    await Promise.all([w.received(0, 40n), w.received(1, 40n), w.received(2, 60n), w.received(3, 40n)]);
    expect(gaps).toEqual([{ partition: 0, from: 30n, to: 40n }]);
  });

  test("a check answered after another assignment is dropped; a failed check is reported, not thrown", async () => {
    const { gaps, failures, w } = watch({ 0: { committed: 0n, logStart: 10n }, 1: new Error("broker gone") });
    w.assigned([0, 1]);
    const stale = w.received(0, 10n);
    w.assigned([0]);
    await stale;
    await w.received(1, 3n); // not awaiting a first record any more: no check
    expect(gaps).toEqual([]);
    w.assigned([1]);
    await w.received(1, 3n);
    expect(failures.map((e) => (e as Error).message)).toEqual(["broker gone"]);
  });
});

describe("the writer and records deleted before it read them (real Kafka)", () => {
  const { addresses, sql, names, producer } = pipelineFixture("gaps", { partitions: 1 });

  test("offsets deleted past the committed one are reported (event and metric) and the rest is written", async () => {
    const config = consumerConfig(addresses, names, { SVC_AUDIT_METRICS_PORT: "0" });
    const before = makeLines(10, 1);
    await producer.send(names.topic, before);
    const first = await startConsumer(config);
    try {
      await waitFor(
        "the first 10 written",
        async () => ((await indexedIds(sql, names.schema)).size === 10 ? true : undefined),
        { timeoutMs: 30_000 },
      );
    } finally {
      await first.stop();
    }

    // While the writer is down, retention deletes offsets 10..14 of the 10 new ones (deleteRecords does what the
    // broker's retention check does: moves the log start).
    const after = makeLines(10, 1);
    await producer.send(names.topic, after);
    const admin = new Admin({ clientId: randomName("qc-gaps-admin"), bootstrapBrokers: addresses.brokers.split(",") });
    try {
      await admin.deleteRecords({ topics: [{ name: names.topic, partitions: [{ partition: 0, offset: 15n }] }] });
    } finally {
      await admin.close();
    }

    const second = await startConsumer(config);
    const lost: OffsetGap[] = [];
    second.events.on("offsets-lost", (gap) => lost.push(gap));
    try {
      await waitFor(
        "the 5 left written",
        async () => ((await indexedIds(sql, names.schema)).size === 15 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      await waitFor("the gap reported", async () => (lost.length > 0 ? true : undefined), { timeoutMs: 10_000 });
      expect(lost).toEqual([{ partition: 0, from: 10n, to: 15n }]);
      const metrics = await (await fetch(`${second.metricsUrl}/metrics`)).text();
      expect(metrics).toContain("svc_audit_writer_offsets_lost_total 5");
      const ids = await indexedIds(sql, names.schema);
      expect(after.slice(0, 5).some((l) => ids.has(l.id))).toBe(false);
      expect(after.slice(5).every((l) => ids.has(l.id))).toBe(true);
    } finally {
      await second.stop();
    }
  });
});
