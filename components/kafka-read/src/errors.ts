import { SvcError } from "@svc/common";

/** Stable codes of reading a topic's records; callers and tests branch on these, never on message text. */
export const KAFKA_READ_ERROR_CODES = [
  /**
   * Fetching records failed (a partition's Kafka error, no leader known, no offset to start from), retriable; once it
   * failed `retries` + 1 times in a row the fetcher stops and reports it (`onFailure`). `subject` is the topic.
   */
  "KAFKA_READ_FETCH_FAILED",
  /** A fetched record batch cannot be read (not the magic 2 format, cut inside a record, unknown compression). */
  "KAFKA_READ_RECORD_BATCH_INVALID",
] as const;

export type KafkaReadErrorCode = (typeof KAFKA_READ_ERROR_CODES)[number];

export class KafkaReadError extends SvcError<KafkaReadErrorCode> {}
