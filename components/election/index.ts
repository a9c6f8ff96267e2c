export { type ComponentProfile, type ElectionBackend, parseElectionBackend } from "./src/component-profile.ts";
export { ELECTION_ERROR_CODES, ElectionError, type ElectionErrorCode } from "./src/errors.ts";
export { FAST_LEASE, type LeaseTimings, SLOW_LEASE, validateLeaseTimings } from "./src/lease-timings.ts";
