// Test and bench helpers: component replicas as real processes. Not for services.

export { CONFIG_TEST_AUTH_ENV, type ComponentAuthFixture, componentAuthFixture } from "./src/component-auth-fixture.ts";
export { leaderAmong, type ReplicaLine, ReplicaProcess } from "./src/replica-process.ts";
