import { expect, test } from "bun:test";
import { ElectionError, FAST_LEASE, SLOW_LEASE, validateLeaseTimings } from "../index.ts";

test("the spec's two timing sets are valid", () => {
  expect(validateLeaseTimings(SLOW_LEASE)).toEqual({
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
  });
  expect(validateLeaseTimings(FAST_LEASE)).toEqual({
    leaseDurationSeconds: 6,
    renewDeadlineSeconds: 4,
    retryPeriodSeconds: 1,
  });
});

test.each([
  ["renewDeadlineSeconds", { leaseDurationSeconds: 10, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 }],
  ["renewDeadlineSeconds", { leaseDurationSeconds: 15, renewDeadlineSeconds: 2, retryPeriodSeconds: 2 }],
  ["retryPeriodSeconds", { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 0 }],
])("unsafe timings are refused naming %s", (name, timings) => {
  let error: unknown;
  try {
    validateLeaseTimings(timings, "backend.lease");
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ElectionError);
  expect((error as ElectionError).code).toBe("ELECTION_TIMINGS_INVALID");
  expect((error as ElectionError).field).toBe(`backend.lease.${name}`);
});
