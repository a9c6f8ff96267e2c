import { describe, expect, test } from "bun:test";
import { rejectionOf, tempDir } from "@svc/testkit";
import { BatchSpool, PartitionBatch, QueueConsumerError, readIndexFields } from "../index.ts";
import { encodeWhilePutting, nextTurn } from "../src/encode-while-putting.ts";
import { type ClosedBatch, readIndexFieldsInSlices } from "../src/partition-batch.ts";
import { encodedEvents, recordLine } from "./helpers.ts";

function closedBatch(lines = 3, body?: PartitionBatch["body"]): ClosedBatch {
  const batch = new PartitionBatch("topic.a", 1, body);
  for (let i = 0; i < lines; i += 1) {
    const line = recordLine(`id-${i}`, `t${i % 3}`, `2026-11-23T09:15:${String(i % 60).padStart(2, "0")}.123Z`);
    batch.add(Buffer.from(line), 10n + BigInt(i), 1_763_889_300_000, 1);
  }
  return batch.close();
}

/** A PUT as the S3 client makes it: some promise steps before its request is handed over, then the answer later. */
function putAfterSteps(steps: number, settle: Promise<string>) {
  const put = { handedOver: false };
  const promise = (async () => {
    for (let i = 0; i < steps; i += 1) await Promise.resolve();
    put.handedOver = true;
    return settle;
  })();
  return { put, promise };
}

function later<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Calls `before(linesRead)` as each slice of `closed`'s lines starts (`linesRead()`: lines read so far). */
function beforeEachRead(closed: ClosedBatch, before: (linesRead: () => number) => void): void {
  const lines = closed.body.lines.bind(closed.body);
  let read = 0;
  closed.body.lines = (lengths) => {
    const reader = lines(lengths);
    return {
      read: (count, onLine) => {
        before(() => read);
        return reader.read(count, (...line) => {
          read += 1;
          onLine(...line);
        });
      },
      close: () => reader.close(),
    };
  };
}

describe("readIndexFieldsInSlices", () => {
  test("the same rows as readIndexFields, a pause before each slice of lines, from memory and from a spool file", async () => {
    const dir = await tempDir("qc-slices");
    const spool = BatchSpool.open(dir.path);
    try {
      for (const body of [undefined, spool.newBody()]) {
        const closed = closedBatch(10, body);
        const whole = readIndexFields(closed);
        let pauses = 0;
        const sliced = await readIndexFieldsInSlices(
          closed,
          async () => {
            pauses += 1;
          },
          3,
        );
        // slices of 3, 3, 3 and 1 lines
        expect(pauses).toBe(4);
        expect(encodedEvents(sliced)).toEqual(encodedEvents(whole));
        expect([sliced.unindexable, sliced.minTime, sliced.maxTime]).toEqual([
          whole.unindexable,
          whole.minTime,
          whole.maxTime,
        ]);
        closed.body.discard();
      }
    } finally {
      spool.close();
      await dir.remove();
    }
  });

  test("what is ready runs between slices", async () => {
    const closed = closedBatch(8);
    let ranAt = -1;
    beforeEachRead(closed, (read) => {
      if (read() === 4) setImmediate(() => (ranAt = read()));
    });
    await readIndexFieldsInSlices(closed, nextTurn, 2);
    // scheduled as the third slice (lines 5 and 6) began, it ran before the fourth
    expect(ranAt).toBe(6);
  });
});

describe("encodeWhilePutting", () => {
  test("reads the first line after the PUT's promise steps ran (its request handed over), encodes before it answers", async () => {
    const answer = later<string>();
    const { put, promise } = putAfterSteps(20, answer.promise);
    let answered = false;
    void promise.then(() => {
      answered = true;
    });
    const closed = closedBatch();
    let handedOverAtFirstRead: boolean | undefined;
    beforeEachRead(closed, () => {
      handedOverAtFirstRead ??= put.handedOver;
    });
    const sealed = await encodeWhilePutting(closed, promise);
    expect(handedOverAtFirstRead).toBe(true);
    expect(answered).toBe(false);
    expect(encodedEvents(sealed).map((event) => event.id)).toEqual(["id-0", "id-1", "id-2"]);
    answer.resolve("v1");
    expect(await promise).toBe("v1");
  });

  test("a PUT that fails during the encoding is the caller's to hear: no unhandled rejection, its error kept", async () => {
    // Listened to in this test only: a listener turns every unhandled rejection into a quiet one.
    const unheard: unknown[] = [];
    const onUnhandled = (reason: unknown) => unheard.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const failure = new QueueConsumerError("QUEUE_CONSUMER_PUT_FAILED", "PUT refused", { subject: "k" });
      const { promise } = putAfterSteps(1, Promise.reject(failure));
      const sealed = await encodeWhilePutting(closedBatch(), promise);
      expect(sealed.records).toBe(3);
      // Two more turns: an unhandled rejection would have been reported by now.
      await nextTurn();
      await nextTurn();
      expect(unheard).toEqual([]);
      expect((await rejectionOf(promise, QueueConsumerError)).code).toBe("QUEUE_CONSUMER_PUT_FAILED");
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  test("when encoding throws, the PUT settles before the error is passed on", async () => {
    const answer = later<string>();
    const { promise } = putAfterSteps(2, answer.promise);
    let putSettled = false;
    void promise.then(() => {
      putSettled = true;
    });
    const spoolError = new QueueConsumerError("QUEUE_CONSUMER_SPOOL_FAILED", "spool read failed", { subject: "f" });
    const encoding = encodeWhilePutting(closedBatch(), promise, async () => {
      setImmediate(() => answer.resolve("v1"));
      throw spoolError;
    });
    const error = await rejectionOf(encoding, QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
    expect(putSettled).toBe(true);
  });
});
