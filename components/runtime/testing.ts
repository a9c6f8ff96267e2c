// Test and bench helpers: component replicas as real processes, and reading a `/metrics` text. Not for services.

export { CONFIG_TEST_AUTH_ENV, type ComponentAuthFixture, componentAuthFixture } from "./src/component-auth-fixture.ts";
export { metricValue } from "./src/metric-samples.ts";
export { leaderAmong, type ReplicaLine, ReplicaProcess } from "./src/replica-process.ts";
