import { describe, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { QueueConsumerError } from "../src/errors.ts";
import type { ClosedBatch } from "../src/partition-batch.ts";
import { writeSlots } from "../src/write-slots.ts";

const batch = (partition: number) =>
  ({ topic: "t", partition, firstOffset: 0n, lastOffset: 0n }) as unknown as ClosedBatch;

describe("writeSlots", () => {
  test("at most `concurrency` writes run; the next starts when one ends", async () => {
    const release: (() => void)[] = [];
    const started: number[] = [];
    const gated = writeSlots(2, (b) => {
      started.push(b.partition);
      return new Promise<void>((resolve) => release.push(resolve));
    });
    const signal = new AbortController().signal;
    const done = [0, 1, 2].map((p) => gated(batch(p), signal));
    await Bun.sleep(0);
    expect(started).toEqual([0, 1]);
    release.shift()?.();
    await done[0];
    await Bun.sleep(0);
    expect(started).toEqual([0, 1, 2]);
    for (const r of release.splice(0)) r();
    await Promise.all(done);
  });

  test("a batch aborted while it waited for a slot is not written: QUEUE_CONSUMER_ABORTED", async () => {
    let releaseFirst: (() => void) | undefined;
    const written: number[] = [];
    const gated = writeSlots(1, (b) => {
      written.push(b.partition);
      return b.partition === 0 ? new Promise<void>((resolve) => (releaseFirst = resolve)) : Promise.resolve();
    });
    const first = gated(batch(0), new AbortController().signal);
    const revoked = new AbortController();
    const waiting = gated(batch(1), revoked.signal);
    revoked.abort();
    await Bun.sleep(0);
    releaseFirst?.();
    await first;
    const error = await rejectionOf(waiting, QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_ABORTED");
    expect(written).toEqual([0]);
  });
});
