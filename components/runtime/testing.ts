// Test and bench helpers: component replicas as real processes. Not for services.
export { leaderAmong, type ReplicaLine, ReplicaProcess } from "./src/replica-process.ts";
