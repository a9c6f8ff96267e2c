import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
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
  const error = thrownBy(() => validateLeaseTimings(timings, "backend.lease"), ElectionError);
  expect(error.code).toBe("ELECTION_TIMINGS_INVALID");
  expect(error.subject).toBe(`backend.lease.${name}`);
});
