import { Counter, Gauge, Registry } from "prom-client";
import { DEAD_LETTER_REASONS } from "./classify-line.ts";

/** What `bytesBehind` and the state gauges read when scraped. */
export interface AgentGaugeSources {
  bytesBehind(): number;
  inFlightBytes(): number;
  /** Bytes of the read buffers allocated (held for unacknowledged lines, or kept free for reuse). */
  readBufferBytes(): number;
  shipping(): boolean;
}

/** The agent's Prometheus metrics, in a registry of its own (one per agent instance, never the global one). */
export class AgentMetrics {
  readonly registry = new Registry();
  readonly linesRead: Counter;
  readonly bytesRead: Counter;
  readonly recordsShipped: Counter;
  readonly deadLettered: Counter<"reason">;
  readonly bytesShipped: Counter;
  readonly sendRetries: Counter;
  readonly checkpointFailures: Counter;
  readonly checkpointsWritten: Counter;
  readonly rotations: Counter<"kind">;
  readonly truncatedPartialBytes: Counter;

  constructor(sources: AgentGaugeSources) {
    const registers = [this.registry];
    this.linesRead = new Counter({ name: "svc_agent_lines_read_total", help: "Lines read from the source", registers });
    this.bytesRead = new Counter({
      name: "svc_agent_bytes_read_total",
      help: "Bytes read from the source (over every file and rotation)",
      registers,
    });
    this.recordsShipped = new Counter({
      name: "svc_agent_records_shipped_total",
      help: "Records acknowledged by Kafka on the audit topic",
      registers,
    });
    this.deadLettered = new Counter({
      name: "svc_agent_dead_lettered_total",
      help: "Lines acknowledged by Kafka on the dead-letter topic, by reason",
      labelNames: ["reason"],
      registers,
    });
    for (const reason of DEAD_LETTER_REASONS) this.deadLettered.inc({ reason }, 0);
    this.bytesShipped = new Counter({
      name: "svc_agent_bytes_shipped_total",
      help: "Source bytes whose lines Kafka acknowledged",
      registers,
    });
    this.sendRetries = new Counter({
      name: "svc_agent_send_retries_total",
      help: "Batches sent again after a retriable Kafka error",
      registers,
    });
    this.checkpointFailures = new Counter({
      name: "svc_agent_checkpoint_failures_total",
      help: "Checkpoint writes that failed (shipping stops until one succeeds)",
      registers,
    });
    this.checkpointsWritten = new Counter({
      name: "svc_agent_checkpoints_written_total",
      help: "Checkpoints written",
      registers,
    });
    this.rotations = new Counter({
      name: "svc_agent_rotations_total",
      help: "Source file switches, by kind (rename, recreate, copytruncate, truncate)",
      labelNames: ["kind"],
      registers,
    });
    this.truncatedPartialBytes = new Counter({
      name: "svc_agent_truncated_partial_bytes_total",
      help: "Bytes of a partial last line dropped because its file was truncated under it",
      registers,
    });
    new Gauge({
      name: "svc_agent_bytes_behind",
      help: "Source bytes not yet acknowledged by Kafka (file size minus checkpointed position, across rotations)",
      registers,
      collect() {
        this.set(sources.bytesBehind());
      },
    });
    new Gauge({
      name: "svc_agent_read_buffer_bytes",
      help: "Bytes of the buffers file reads go into: those holding lines not yet acknowledged, and free ones kept for reuse",
      registers,
      collect() {
        this.set(sources.readBufferBytes());
      },
    });
    new Gauge({
      name: "svc_agent_in_flight_bytes",
      help: "Bytes read and held until Kafka acknowledges them (bounded by SVC_AGENT_MAX_IN_FLIGHT_BYTES)",
      registers,
      collect() {
        this.set(sources.inFlightBytes());
      },
    });
    new Gauge({
      name: "svc_agent_shipping",
      help: "1 while shipping; 0 while stopped by a checkpoint failure, a Kafka outage or a fatal error",
      registers,
      collect() {
        this.set(sources.shipping() ? 1 : 0);
      },
    });
  }

  /** The current value of a counter (tests and the bench read them without scraping). */
  static async valueOf(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
    const { values } = await counter.get();
    const wanted = Object.entries(labels);
    return values.filter((v) => wanted.every(([k, l]) => v.labels[k] === l)).reduce((sum, v) => sum + v.value, 0);
  }
}
