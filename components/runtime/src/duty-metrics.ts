import { Counter, Gauge, Registry } from "prom-client";

/**
 * The counters of the leader-only duties (and endpoint's routes), one registry per process: the duties are built
 * by each component's wiring before `startReplica` runs, so the counters are module-level, made where the duty
 * acts, and `startReplica` serves this registry beside its own (elector, gRPC) on the health port's `/metrics`.
 * Every deployment, test and bench runs one replica per process; two replicas of one component started in one
 * process would share (and sum) these counters, while their election and gRPC metrics stay apart.
 */
export const dutyRegistry = new Registry();

/**
 * The duty counter `name` of this process, made on first use (a second call, from a module loaded twice or a
 * test, answers the same counter instead of failing on a duplicate name). Counters without labels show 0 at once.
 */
export function dutyCounter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
  const existing = dutyRegistry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter<L>({ name, help, labelNames, registers: [dutyRegistry] });
}

/** The duty gauge `name` of this process, made on first use (as `dutyCounter`). */
export function dutyGauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
  const existing = dutyRegistry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge<L>({ name, help, labelNames, registers: [dutyRegistry] });
}

// the gRPC call counting a process without a replica (the KMS) needs, without loading the whole runtime (its
// kube client, elector, …: ~0.3 s more at the KMS's start)
export { countUnaryCalls, statusName } from "./grpc-metrics.ts";
