import { describe, expect, test } from "bun:test";
import { BenchError } from "../../src/errors.ts";
import { waitForCount } from "../../src/pipeline/context.ts";
import { describeWhereabouts } from "../../src/pipeline/where-records-are.ts";
import { ProgressLine } from "../../src/progress-line.ts";

const ctx = { progress: new ProgressLine(true) };

/** A count that climbs by `step` per call up to `top`, then stays there. */
function climbing(step: number, top: number): () => Promise<number> {
  let n = 0;
  return async () => {
    n = Math.min(top, n + step);
    return n;
  };
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

function codeOf(error: Error): string | undefined {
  return error instanceof BenchError ? error.code : undefined;
}

describe("waitForCount", () => {
  test("returns the elapsed ms once the count reaches the target", async () => {
    const startedAt = performance.now();
    const ms = await waitForCount(ctx, "records", climbing(10, 100), 100, { startedAt, intervalMs: 1 });
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThanOrEqual(performance.now() - startedAt);
  });

  test.each([
    {
      name: "a count that stopped moving short of the target fails as a stall, long before the deadline",
      count: climbing(10, 70),
      stalledMs: 30,
      timeoutMs: 60_000,
      message: "stuck at 70 of 100",
    },
    {
      name: "a count still at zero is not a stall (the services start): the deadline ends it",
      count: async () => 0,
      stalledMs: 1,
      timeoutMs: 40,
      message: "only 0 of 100",
    },
  ])("$name", async ({ count, stalledMs, timeoutMs, message }) => {
    const options = { startedAt: performance.now(), intervalMs: 1, stalledMs, timeoutMs };
    const error = await failureOf(waitForCount(ctx, "records", count, 100, options));
    expect(codeOf(error)).toBe("BENCH_TIMEOUT");
    expect(error.message).toContain(message);
  });

  test("a count that cannot be read yet counts as zero; an abort's error ends the wait", async () => {
    let calls = 0;
    const abort = new Error("agent exited with 1");
    const error = await failureOf(
      waitForCount(
        ctx,
        "records",
        async () => {
          calls += 1;
          throw new Error("relation does not exist");
        },
        100,
        { startedAt: performance.now(), intervalMs: 1, abort: () => (calls >= 3 ? abort : undefined) },
      ),
    );
    expect(error).toBe(abort);
    expect(calls).toBe(3);
  });
});

test("describeWhereabouts: the total, then one line per partition", () => {
  const text = describeWhereabouts({
    inKafka: 15,
    partitions: [
      { partition: 0, end: 10, committed: 10, writtenThrough: 9 },
      { partition: 1, end: 5, committed: -1, writtenThrough: -1 },
    ],
  });
  expect(text.split("\n")).toEqual([
    "in Kafka: 15",
    "  partition 0: end 10, committed 10, written through 9",
    "  partition 1: end 5, committed -1, written through -1",
  ]);
});
