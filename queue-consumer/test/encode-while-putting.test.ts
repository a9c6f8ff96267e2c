import { afterEach, describe, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { PartitionBatch, QueueConsumerError, readIndexFields } from "../index.ts";
import { encodeWhilePutting } from "../src/encode-while-putting.ts";
import type { ClosedBatch } from "../src/partition-batch.ts";
import { encodedEvents, recordLine } from "./helpers.ts";

function closedBatch(): ClosedBatch {
  const batch = new PartitionBatch("topic.a", 1);
  ["a", "b", "c"].forEach((id, i) => {
    batch.add(Buffer.from(recordLine(id, "t1", "2026-11-23T09:15:00.123Z")), 10n + BigInt(i), 1_763_889_300_000, 1);
  });
  return batch.seal();
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

const unheard: unknown[] = [];
const onUnhandled = (reason: unknown) => unheard.push(reason);
process.on("unhandledRejection", onUnhandled);
afterEach(() => {
  unheard.length = 0;
});

describe("encodeWhilePutting", () => {
  test("encodes the batch after the PUT's promise steps ran (its request handed over), before the PUT answered", async () => {
    let answer: (value: string) => void = () => undefined;
    const { put, promise } = putAfterSteps(
      20,
      new Promise<string>((resolve) => {
        answer = resolve;
      }),
    );
    let handedOverAtEncode: boolean | undefined;
    let answered = false;
    void promise.then(() => {
      answered = true;
    });
    const sealed = await encodeWhilePutting(closedBatch(), promise, (closed) => {
      handedOverAtEncode = put.handedOver;
      return readIndexFields(closed);
    });
    expect(handedOverAtEncode).toBe(true);
    expect(answered).toBe(false);
    expect(encodedEvents(sealed).map((event) => event.id)).toEqual(["a", "b", "c"]);
    answer("v1");
    expect(await promise).toBe("v1");
  });

  test("a PUT that fails during the encoding is the caller's to hear: no unhandled rejection, its error kept", async () => {
    const failure = new QueueConsumerError("QUEUE_CONSUMER_PUT_FAILED", "PUT refused", { subject: "k" });
    const { promise } = putAfterSteps(1, Promise.reject(failure));
    const sealed = await encodeWhilePutting(closedBatch(), promise);
    expect(sealed.records).toBe(3);
    // Two more turns: an unhandled rejection would have been reported by now.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(unheard).toEqual([]);
    expect((await rejectionOf(promise, QueueConsumerError)).code).toBe("QUEUE_CONSUMER_PUT_FAILED");
  });

  test("when encoding throws, the PUT settles before the error is passed on", async () => {
    let answer: (value: string) => void = () => undefined;
    const { promise } = putAfterSteps(
      2,
      new Promise<string>((resolve) => {
        answer = resolve;
      }),
    );
    let putSettled = false;
    void promise.then(() => {
      putSettled = true;
    });
    const spoolError = new QueueConsumerError("QUEUE_CONSUMER_SPOOL_FAILED", "spool read failed", { subject: "f" });
    const encoding = encodeWhilePutting(closedBatch(), promise, () => {
      setTimeout(() => answer("v1"), 5);
      throw spoolError;
    });
    const error = await rejectionOf(encoding, QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
    expect(putSettled).toBe(true);
  });
});
