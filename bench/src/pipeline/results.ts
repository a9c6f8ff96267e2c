import type { CpuBudget } from "./cpu-budget.ts";

/** What one bench run measured (the `--json` output and the source of the table). */
export interface ShipFigures {
  records: number;
  bytes: number;
  ms: number;
  /** Peak RSS in bytes (VmHWM). */
  peakRss: number;
  /** CPU time (user + system, every thread) from spawn to the last record counted, in ms, when it was read. */
  cpuMs?: number | undefined;
  /** Where the machine's CPU went over the run (`cpu-budget.ts`), when /proc could be read. */
  budget?: CpuBudget | undefined;
}

export interface EndToEndFigures extends ShipFigures {
  agentRss: number;
  consumerRss: number;
  /** Events per second from 10 % to 90 % of the records durable (`sustainedRate`), when the objects allow it. */
  sustainedPerSecond?: number | undefined;
}

export interface LatencyFigures {
  rate: number;
  batchMaxAgeMs: number;
  records: number;
  /** Records found in the index (distinct ids) of those written. */
  stored: number;
  /** Offsets the writer skipped: deleted by Kafka's retention before it read them (`IndexReader.skippedOffsets`). */
  skipped?: number;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  maxMs: number | undefined;
  /** Over the partitions that received records, the largest extrapolated objects per hour. */
  objectsPerPartitionHour: number | undefined;
  agentRss: number;
  consumerRss: number;
  /** How far the paced writer fell behind its schedule at worst (a busy machine). */
  writerMaxLagMs: number;
  /**
   * The rate the bench's line writer reached (records over its writing time): below `rate` when it lagged, and the
   * pipeline was then offered less than the row's rate (latency is measured from each line's own write).
   */
  achievedRate?: number;
}

/** The throughput figures of one round (`--rounds`): each tool, then agent and consumer together, on the same file. */
export interface ThroughputRound {
  kcatProduce?: ShipFigures;
  kcatConsume?: ShipFigures;
  rsyslog?: ShipFigures;
  agent?: ShipFigures;
  consumer?: ShipFigures;
  endToEnd?: EndToEndFigures;
}

export const THROUGHPUT_MEASURES = ["kcatProduce", "kcatConsume", "rsyslog", "agent", "consumer", "endToEnd"] as const;

export interface BenchResults extends ThroughputRound {
  startedAt: string;
  workload: {
    records: number;
    bytes: number;
    recordBytes: number;
    partitions: number;
    rates: number[];
    seconds: number;
    batchAges: number[];
    rounds: number;
    machine: { cpus: number; memoryGiB: number };
  };
  /** Every round, in order; the fields above hold each measure's median round (`medianRound`). */
  rounds: ThroughputRound[];
  latency: LatencyFigures[];
  /** Sections not run, and why (a service not built yet, a failure). */
  skipped: { section: string; reason: string }[];
}
