import { expect, test } from "bun:test";
import type { BenchResults, LatencyFigures } from "../../src/pipeline/results.ts";
import { medianRound } from "../../src/pipeline/rounds.ts";
import { benchRows } from "../../src/pipeline/rows.ts";

const workload: BenchResults["workload"] = {
  records: 1_000,
  bytes: 400_000,
  recordBytes: 400,
  partitions: 6,
  rates: [10_000],
  seconds: 10,
  batchAges: [9_000, 10_000],
  rounds: 1,
  machine: { cpus: 2, memoryGiB: 8 },
};
const latency = (over: Partial<LatencyFigures>): LatencyFigures => ({
  rate: 10_000,
  batchMaxAgeMs: 9_000,
  records: 100_000,
  stored: 100_000,
  p50Ms: 4_000,
  p99Ms: 9_500,
  maxMs: 9_900,
  objectsPerPartitionHour: 380,
  agentRss: 50 * 2 ** 20,
  consumerRss: 100 * 2 ** 20,
  writerMaxLagMs: 5,
  ...over,
});

test("rows compare the agent with kcat -P and rsyslog, and the consumer with kcat -C", () => {
  const rows = benchRows({
    startedAt: "",
    workload,
    kcatProduce: { records: 1_000, bytes: 400_000, ms: 10, peakRss: 1, cpuMs: 4 },
    rsyslog: { records: 1_000, bytes: 400_000, ms: 20, peakRss: 1 },
    agent: { records: 1_000, bytes: 400_000, ms: 15, peakRss: 1, cpuMs: 12 },
    kcatConsume: { records: 1_000, bytes: 400_000, ms: 10, peakRss: 1 },
    consumer: { records: 1_000, bytes: 400_000, ms: 25, peakRss: 1 },
    rounds: [],
    latency: [],
    skipped: [],
  });
  const agent = rows.find((r) => r.section === "agent" && r.goal);
  expect(agent?.ours?.value).toBeCloseTo(66_666.7, 0);
  expect(agent?.met).toBe(true); // 67 % of kcat, above rsyslog's 50k
  const consumer = rows.find((r) => r.section === "consumer" && r.goal);
  expect(consumer?.met).toBe(false); // 40 % of kcat -C
  const cpu = rows.find((r) => r.measure.startsWith("CPU per record"));
  expect(cpu?.ours).toEqual({ value: 12, unit: "µs/rec" }); // 12 ms over 1,000 records
  expect(cpu?.kcat?.value).toBe(4);
  expect(cpu?.rsyslog).toBeUndefined(); // not read
});

test("latency rows: the 10k/s goals, and records never durable make p99 unknown and the goal missed", () => {
  const ok = benchRows({ startedAt: "", workload, rounds: [], latency: [latency({})], skipped: [] });
  expect(ok.find((r) => r.measure.startsWith("p99"))?.met).toBe(true);
  expect(ok.find((r) => r.section === "objects")?.met).toBe(false); // 380 > 360
  const late = benchRows({
    startedAt: "",
    workload,
    rounds: [],
    latency: [latency({ stored: 98_000, p99Ms: Number.POSITIVE_INFINITY })],
    skipped: [],
  });
  const p99 = late.find((r) => r.measure.startsWith("p99"));
  expect(p99?.ours).toBeUndefined();
  expect(p99?.met).toBe(false);
  expect(p99?.note).toContain("2000 not durable in time");
  expect(p99?.note).not.toContain("retention");
  const deleted = benchRows({
    startedAt: "",
    workload,
    rounds: [],
    latency: [latency({ stored: 98_000, skipped: 1_500, p99Ms: Number.POSITIVE_INFINITY })],
    skipped: [],
  });
  expect(deleted.find((r) => r.measure.startsWith("p99"))?.note).toContain(
    "2000 not durable in time (1500 of them deleted by Kafka's retention before they were read)",
  );
});

test("a latency row whose line writer lagged says so, with the rate the pipeline was offered", () => {
  const rows = benchRows({
    startedAt: "",
    workload,
    rounds: [],
    latency: [latency({ rate: 50_000, writerMaxLagMs: 1_700, achievedRate: 48_650.4 })],
    skipped: [],
  });
  expect(rows.find((r) => r.measure.startsWith("p99"))?.note).toBe(
    "the bench's line writer lagged 1700 ms, 48,650/s offered",
  );
});

test("the 10k/s goal is judged once per batch age with both figures: a p99 met and too many objects is not met", () => {
  const judged = (over: Partial<LatencyFigures>) =>
    benchRows({ startedAt: "", workload, rounds: [], latency: [latency(over)], skipped: [] }).find((r) =>
      r.measure.startsWith("10k/s goal"),
    )?.met;
  expect(judged({ p99Ms: 9_500, objectsPerPartitionHour: 380 })).toBe(false);
  expect(judged({ p99Ms: 10_012, objectsPerPartitionHour: 359.7 })).toBe(false);
  expect(judged({ p99Ms: 9_991, objectsPerPartitionHour: 360 })).toBe(true);
  expect(judged({ p99Ms: Number.POSITIVE_INFINITY, stored: 90_000, objectsPerPartitionHour: 350 })).toBe(false);
  expect(judged({ rate: 1_000 })).toBeUndefined();
});

test("memory goals at 50k/s are megabytes (10^6 bytes): 250 MiB misses 256 MB, 244 MiB meets it", () => {
  const at = (agentMiB: number, consumerMiB: number) => {
    const run = latency({ rate: 50_000, agentRss: agentMiB * 2 ** 20, consumerRss: consumerMiB * 2 ** 20 });
    const rows = benchRows({ startedAt: "", workload, rounds: [], latency: [run], skipped: [] });
    const met = (who: string) => rows.find((r) => r.measure.startsWith(`peak RSS ${who}, 50,000/s`))?.met;
    return [met("agent"), met("consumer")];
  };
  expect(at(76, 244)).toEqual([true, true]);
  expect(at(77, 245)).toEqual([false, false]);
  expect(at(80, 250)).toEqual([false, false]);
});

test("rounds: each row shows the median round, the range over the rounds beside it, and judges the rounds' ratios", () => {
  const ship = (ms: number, peakRss = 1) => ({ records: 1_000, bytes: 400_000, ms, peakRss });
  const rounds = [
    { kcatProduce: ship(2), agent: ship(5, 3 * 2 ** 20) }, // agent 200k, kcat 500k
    { kcatProduce: ship(4), agent: ship(4, 2 * 2 ** 20) }, // agent 250k, kcat 250k
    { kcatProduce: ship(1), agent: ship(10, 4 * 2 ** 20) }, // agent 100k, kcat 1M
  ];
  const rows = benchRows({ startedAt: "", workload, rounds, ...medianRound(rounds), latency: [], skipped: [] });
  const agent = rows.find((r) => r.section === "agent" && r.goal);
  expect(agent?.ours).toEqual({ value: 200_000, unit: "rec/s", range: [100_000, 250_000] });
  expect(agent?.kcat).toEqual({ value: 500_000, unit: "rec/s", range: [250_000, 1_000_000] });
  expect(agent?.met).toBe(false); // ratios 0.4, 1.0, 0.1: median 0.4 < 0.5; no rsyslog, so not "yes" either way
  expect(agent?.note).toBe("40.0 % of kcat -P, – of rsyslog (median of the rounds' own ratios)");
  const memory = rows.find((r) => r.measure === "peak RSS, file → topic");
  expect(memory?.ours).toEqual({ value: 3, unit: "MiB", range: [2, 4] }); // the median round's RSS
});

test("rounds: a ratio goal is judged on each round's pair, not on medians taken apart", () => {
  const ship = (recordsPerSecond: number) => ({
    records: 1_000,
    bytes: 400_000,
    ms: 1e6 / recordsPerSecond,
    peakRss: 1,
  });
  const rounds = [
    { kcatConsume: ship(190_000), consumer: ship(100_000) }, // 52.6 %
    { kcatConsume: ship(1_000_000), consumer: ship(200_000) }, // 20 %: a fast stretch for kcat alone
    { kcatConsume: ship(580_000), consumer: ship(300_000) }, // 51.7 %
  ];
  const rows = benchRows({ startedAt: "", workload, rounds, ...medianRound(rounds), latency: [], skipped: [] });
  const consumer = rows.find((r) => r.section === "consumer" && r.goal);
  // The medians apart (200k against 580k) would say 34.5 %, not met.
  expect(consumer?.met).toBe(true);
  expect(consumer?.note).toBe("51.7 % of kcat -C (median of the rounds' own ratios)");
});

test("rounds: end to end shows its median round's rate and both services' RSS", () => {
  const both = (ms: number, agentMiB: number) => ({
    records: 1_000,
    bytes: 400_000,
    ms,
    peakRss: 0,
    agentRss: agentMiB * 2 ** 20,
    consumerRss: 3 * agentMiB * 2 ** 20,
    sustainedPerSecond: 2_000_000 / ms,
  });
  const rounds = [{ endToEnd: both(20, 1) }, { endToEnd: both(10, 2) }, { endToEnd: both(40, 4) }];
  const rows = benchRows({ startedAt: "", workload, rounds, ...medianRound(rounds), latency: [], skipped: [] });
  const rate = rows.find((r) => r.section === "end to end" && r.goal);
  expect(rate?.ours).toEqual({ value: 50_000, unit: "ev/s", range: [25_000, 100_000] });
  expect(rate?.met).toBe(false);
  // The sustained rate of the same (median) round, shown and not judged: the goal is the whole run's.
  const sustained = rows.find((r) => r.measure.startsWith("sustained"));
  expect(sustained?.ours).toEqual({ value: 100_000, unit: "ev/s", range: [50_000, 200_000] });
  expect(sustained?.goal).toBeUndefined();
  expect(sustained?.met).toBeUndefined();
  expect(rows.find((r) => r.measure === "peak RSS agent")?.ours).toEqual({ value: 1, unit: "MiB", range: [1, 4] });
  expect(rows.find((r) => r.measure === "peak RSS consumer")?.ours).toEqual({ value: 3, unit: "MiB", range: [3, 12] });
});

test("end-to-end CPU rows: each process per event, the rest of the machine, and the rate the CPU allows", () => {
  const endToEnd = {
    records: 1_000,
    bytes: 400_000,
    ms: 10,
    peakRss: 2,
    agentRss: 1,
    consumerRss: 1,
    budget: {
      ours: { agent: 3, consumer: 8 },
      servers: { kafka: 4, postgres: 6, minio: 2 },
      machineBusyMs: 25,
    },
  };
  const rows = benchRows({ startedAt: "", workload, endToEnd, rounds: [], latency: [], skipped: [] });
  const value = (measure: string) => rows.find((r) => r.measure === `CPU per event, ${measure}`)?.ours?.value;
  expect(value("agent")).toBe(3); // 3 ms over 1,000 events
  expect(value("consumer")).toBe(8);
  expect(value("Kafka broker")).toBe(4);
  expect(value("PostgreSQL")).toBe(6);
  expect(value("MinIO")).toBe(2);
  expect(value("rest of the machine")).toBe(2); // 25 − (3 + 8 + 4 + 6 + 2)
  expect(value("whole machine")).toBe(25);
  // 2 CPUs ÷ 25 µs per event.
  expect(rows.find((r) => r.measure.startsWith("rate the CPU"))?.ours?.value).toBe(80_000);

  // A server whose pid file named no live process: its row is empty, and so is the rest.
  const missing = benchRows({
    startedAt: "",
    workload,
    endToEnd: { ...endToEnd, budget: { ...endToEnd.budget, servers: { kafka: 4, postgres: 6 } } },
    rounds: [],
    latency: [],
    skipped: [],
  });
  const empty = (measure: string) => missing.find((r) => r.measure === `CPU per event, ${measure}`)?.ours;
  expect(empty("MinIO")).toBeUndefined();
  expect(empty("rest of the machine")).toBeUndefined();
  expect(empty("whole machine")?.value).toBe(25);
});

test("consumer CPU rows: only the consumer among our services, and the rate per record its section's CPU allows", () => {
  const consumer = {
    records: 2_000,
    bytes: 800_000,
    ms: 20,
    peakRss: 1,
    budget: { ours: { consumer: 30 }, servers: { kafka: 2, postgres: 24, minio: 4 }, machineBusyMs: 64 },
  };
  const rows = benchRows({ startedAt: "", workload, consumer, rounds: [], latency: [], skipped: [] });
  const section = rows.filter((r) => r.section === "consumer" && r.measure.startsWith("CPU per record"));
  expect(section.map((r) => [r.measure.replace("CPU per record, ", ""), r.ours?.value])).toEqual([
    ["consumer", 15], // 30 ms over 2,000 records
    ["Kafka broker", 1],
    ["PostgreSQL", 12],
    ["MinIO", 2],
    ["rest of the machine", 2], // 64 − (30 + 2 + 24 + 4) = 4 ms
    ["whole machine", 32],
  ]);
  expect(rows.find((r) => r.section === "consumer" && r.measure.startsWith("rate the CPU"))?.ours).toEqual({
    value: 62_500, // 2 CPUs ÷ 32 µs
    unit: "rec/s",
  });
  // No budget, no rows with figures (the end-to-end section did not run here either).
  expect(rows.filter((r) => r.section === "end to end" && r.ours !== undefined)).toEqual([]);
});
