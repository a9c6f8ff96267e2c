import { expect, test } from "bun:test";
import { rejectionsOf, SvcAggregateError, SvcError } from "../src/svc-error.ts";

class SampleError extends SvcError<"SAMPLE_DOWN" | "SAMPLE_BAD"> {}

test("a subclass carries its code, subject, cause, canRetry and its own name", () => {
  const cause = new Error("socket closed");
  const error = new SampleError("SAMPLE_DOWN", "sample is down", { subject: "kafka", canRetry: true, cause });
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe("SampleError");
  expect(error.code).toBe("SAMPLE_DOWN");
  expect(error.subject).toBe("kafka");
  expect(error.canRetry).toBe(true);
  expect(error.cause).toBe(cause);
});

test("canRetry defaults to false and the cause is absent when none is given", () => {
  const error = new SampleError("SAMPLE_BAD", "bad");
  expect(error.canRetry).toBe(false);
  expect("cause" in error).toBe(false);
  expect(error.subject).toBeUndefined();
});

test("the aggregate keeps every failure, lists each in its message, and retries only when all parts can", () => {
  const down = new SampleError("SAMPLE_DOWN", "etcd exited", { canRetry: true });
  const bad = new SampleError("SAMPLE_BAD", "minio: port 9000 is held by pid 12");
  const both = new SvcAggregateError("SAMPLE_MANY", [down, bad], "2 servers failed to start");
  expect(both.errors).toEqual([down, bad]);
  expect(both.code).toBe("SAMPLE_MANY");
  expect(both.message).toContain("etcd exited");
  expect(both.message).toContain("port 9000 is held by pid 12");
  expect(both.canRetry).toBe(false);
  expect(new SvcAggregateError("SAMPLE_MANY", [down], "one").canRetry).toBe(true);
  expect(new SvcAggregateError("SAMPLE_MANY", [new Error("plain")], "one").canRetry).toBe(false);
});

test("rejectionsOf keeps the reasons of the rejected outcomes in order", async () => {
  const outcomes = await Promise.allSettled([Promise.reject(1), Promise.resolve(2), Promise.reject(3)]);
  expect(rejectionsOf(outcomes)).toEqual([1, 3]);
});
