import { SvcError } from "@svc/common";

/** Stable codes of the queue consumer's failures; callers and tests branch on these, never on message text. */
export const QUEUE_CONSUMER_ERROR_CODES = [
  /** An environment variable has a bad value; `subject` is its name. */
  "QUEUE_CONSUMER_CONFIG_INVALID",
  /** The PUT of a batch object failed; `canRetry` says whether writing it again may succeed; `subject` is the key. */
  "QUEUE_CONSUMER_PUT_FAILED",
  /** A PUT got no whole answer within `SVC_AUDIT_S3_PUT_TIMEOUT_MS` and was aborted; retriable; `subject` is the key. */
  "QUEUE_CONSUMER_PUT_TIMEOUT",
  /** The index transaction of a batch failed; `subject` is the object key. */
  "QUEUE_CONSUMER_INDEX_FAILED",
  /**
   * A batch's tenant has no key in what `tenantKeys` answered (which holds every tenant asked for): an invariant
   * broken, so the index write is not retried; `subject` is the tenant id.
   */
  "QUEUE_CONSUMER_TENANT_KEY_MISSING",
  /** Creating or migrating the index schema failed; `subject` is the schema. */
  "QUEUE_CONSUMER_SCHEMA_FAILED",
  /** Committing a partition's offset to Kafka failed; `subject` is `topic/partition`. */
  "QUEUE_CONSUMER_COMMIT_FAILED",
  /** Joining the consumer group failed at start; the process stops, nothing is committed. */
  "QUEUE_CONSUMER_STREAM_FAILED",
  /** A retry loop was stopped (shutdown or rebalance) before the operation succeeded; nothing was committed. */
  "QUEUE_CONSUMER_ABORTED",
  /** A graceful shutdown ran out of time before every batch was written (its records are read again). */
  "QUEUE_CONSUMER_SHUTDOWN_TIMEOUT",
  /**
   * A batch's spool file (or the spool directory at start) could not be created, written or read; `subject` is the
   * path. Not retried: the consumer stops, nothing of the batch committed (Kafka still has its records).
   */
  "QUEUE_CONSUMER_SPOOL_FAILED",
  /**
   * `rebuild-index` could not list the bucket or read an object version (`subject`: the prefix or key); a run
   * stopped by it is resumed by running it again (the versions indexed are skipped).
   */
  "QUEUE_CONSUMER_REBUILD_READ_FAILED",
  /** `rebuild-index` was given a bad argument; `subject` is its name. */
  "QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID",
  /** The metrics and health listener could not be started; `subject` is the address. */
  "QUEUE_CONSUMER_METRICS_LISTEN_FAILED",
] as const;

export type QueueConsumerErrorCode = (typeof QUEUE_CONSUMER_ERROR_CODES)[number];

export class QueueConsumerError extends SvcError<QueueConsumerErrorCode> {}
