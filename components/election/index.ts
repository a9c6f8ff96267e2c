export { type ComponentProfile, type ElectionBackend, parseElectionBackend } from "./src/component-profile.ts";
export { createElector, type ElectorSettings } from "./src/create-elector.ts";
export { ElectionMetrics } from "./src/election-metrics.ts";
export type {
  ElectionEvent,
  ElectionListener,
  ElectionRole,
  Elector,
  LeadershipSnapshot,
} from "./src/elector.ts";
export { ELECTION_ERROR_CODES, ElectionError, type ElectionErrorCode } from "./src/errors.ts";
export { followerStatus, guardService, isExemptPath } from "./src/follower-guard.ts";
export { healthSource } from "./src/health-source.ts";
export { K8sLeaseLock, type K8sLeaseLockOptions } from "./src/k8s-lease-lock.ts";
export { keepLeaderLabel, type LeaderLabelOptions, leaderLabelOf } from "./src/leader-label.ts";
export { LeaseElector, type LeaseElectorOptions } from "./src/lease-elector.ts";
export type { LeaseAttempt, LeaseLock } from "./src/lease-lock.ts";
export { FAST_LEASE, type LeaseTimings, SLOW_LEASE, validateLeaseTimings } from "./src/lease-timings.ts";
export { PostgresLeaseLock, type PostgresLeaseLockOptions } from "./src/postgres-lease-lock.ts";
export { withRequestTimeout } from "./src/request-timeout.ts";
export { StaticElector } from "./src/static-elector.ts";
