import { ElectionError } from "./errors.ts";

/** Lease timings, in the names and units of the spec's Limits table (and of client-go's leader election). */
export interface LeaseTimings {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
}

/** The spec's timings: `backend` and `shaper` 15/10/2, `orchestrator` and `compute` 6/4/1. */
export const SLOW_LEASE: LeaseTimings = { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 };
export const FAST_LEASE: LeaseTimings = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 };

/** client-go's jitter factor: a retry may come up to 1.2 retry periods late. */
const JITTER = 1.2;

/**
 * A leader must give up before its lease can be taken (renewDeadline < leaseDuration), and must get at least one
 * jittered retry in before its deadline (renewDeadline > 1.2 × retryPeriod), as client-go requires.
 */
export function validateLeaseTimings(timings: LeaseTimings, field = "lease"): LeaseTimings {
  const { leaseDurationSeconds: lease, renewDeadlineSeconds: renew, retryPeriodSeconds: retry } = timings;
  for (const [name, value] of Object.entries(timings)) {
    if (!(Number.isFinite(value) && value > 0)) {
      throw new ElectionError(
        "ELECTION_TIMINGS_INVALID",
        `${field}.${name}`,
        `must be a positive number, got ${value}`,
      );
    }
  }
  if (renew >= lease) {
    throw new ElectionError(
      "ELECTION_TIMINGS_INVALID",
      `${field}.renewDeadlineSeconds`,
      `must be below leaseDurationSeconds (${renew} >= ${lease})`,
    );
  }
  if (renew <= JITTER * retry) {
    throw new ElectionError(
      "ELECTION_TIMINGS_INVALID",
      `${field}.renewDeadlineSeconds`,
      `must exceed ${JITTER} × retryPeriodSeconds (${renew} <= ${JITTER * retry})`,
    );
  }
  return timings;
}
