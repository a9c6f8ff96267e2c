import { Counter, Gauge, Registry } from "prom-client";

/** What the gauges read when scraped. */
export interface ConsumerGaugeSources {
  bufferedBytes(): number;
  paused(): boolean;
  assignedPartitions(): number;
}

/** The consumer's Prometheus metrics, in a registry of its own (one per consumer, never the global one). */
export class ConsumerMetrics {
  readonly registry = new Registry();
  readonly recordsRead: Counter;
  /** Records read since the last scrape (`noteRecordRead`): added to `recordsRead` when it is read. */
  #unscrapedReads = 0;
  readonly objectsWritten: Counter;
  readonly objectBytes: Counter;
  readonly eventsIndexed: Counter;
  readonly eventsDuplicate: Counter;
  readonly unindexable: Counter;
  readonly putRetries: Counter;
  readonly indexRetries: Counter;
  readonly commits: Counter;
  readonly commitRetries: Counter;
  readonly batchesDropped: Counter;
  readonly sessionRestarts: Counter;
  readonly offsetsLost: Counter;

  constructor(sources: ConsumerGaugeSources) {
    const registers = [this.registry];
    const counter = (name: string, help: string) => new Counter({ name, help, registers });
    const unscraped = () => {
      const reads = this.#unscrapedReads;
      this.#unscrapedReads = 0;
      return reads;
    };
    this.recordsRead = new Counter({
      name: "svc_audit_writer_records_read_total",
      help: "Records read from Kafka into batches",
      registers,
      collect() {
        const reads = unscraped();
        if (reads > 0) this.inc(reads);
      },
    });
    this.objectsWritten = counter("svc_audit_writer_objects_written_total", "Batch objects PUT under Object Lock");
    this.objectBytes = counter("svc_audit_writer_object_bytes_total", "Bytes of the objects PUT (as stored)");
    this.eventsIndexed = counter("svc_audit_writer_events_indexed_total", "Event rows inserted into the index");
    this.eventsDuplicate = counter(
      "svc_audit_writer_events_duplicate_total",
      "Events already indexed (shipped or written twice): stored again, not counted again",
    );
    this.unindexable = counter(
      "svc_audit_writer_unindexable_total",
      "Lines stored in an object that are not a record with an id and an RFC 3339 time",
    );
    this.putRetries = counter("svc_audit_writer_put_retries_total", "PUTs tried again after a retriable failure");
    this.indexRetries = counter("svc_audit_writer_index_retries_total", "Index transactions tried again");
    this.commits = counter("svc_audit_writer_commits_total", "Offsets committed after a batch was durable and indexed");
    this.commitRetries = counter("svc_audit_writer_commit_retries_total", "Offset commits tried again");
    this.batchesDropped = counter(
      "svc_audit_writer_batches_dropped_total",
      "Uncommitted batches dropped (partition revoked, session restarted): read again by the partition's owner",
    );
    this.sessionRestarts = counter(
      "svc_audit_writer_session_restarts_total",
      "Kafka consumer sessions started again after the stream failed",
    );
    this.offsetsLost = counter(
      "svc_audit_writer_offsets_lost_total",
      "Offsets deleted from Kafka (retention) before this writer read them: records lost to the audit log",
    );
    new Gauge({
      name: "svc_audit_writer_buffered_bytes",
      help: "Bytes read from Kafka and not yet committed (open, sealed and in-flight batches)",
      registers,
      collect() {
        this.set(sources.bufferedBytes());
      },
    });
    new Gauge({
      name: "svc_audit_writer_fetch_paused",
      help: "1 while fetching is paused because the buffered bytes reached SVC_AUDIT_MAX_BUFFERED_BYTES",
      registers,
      collect() {
        this.set(sources.paused() ? 1 : 0);
      },
    });
    new Gauge({
      name: "svc_audit_writer_assigned_partitions",
      help: "Partitions of the topic assigned to this replica",
      registers,
      collect() {
        this.set(sources.assignedPartitions());
      },
    });
  }

  /**
   * One more record read: a plain count, added to `recordsRead` when it is scraped. A prom-client `inc()` per record
   * took 1 % of the writer's thread (its profile, queue-consumer/README.md, "Throughput").
   */
  noteRecordRead(): void {
    this.#unscrapedReads += 1;
  }
}
