export { type BatchBody, MemoryBody } from "./src/batch-body.ts";
export { BatchSpool } from "./src/batch-spool.ts";
export {
  type BatchLimits,
  parseQueueConsumerConfig,
  parseQueueConsumerConfig as parseConsumerConfig,
  type QueueConsumerConfig,
  QueueConsumerEnvSchema,
} from "./src/config.ts";
export { ConsumerMetrics } from "./src/consumer-metrics.ts";
export { QUEUE_CONSUMER_ERROR_CODES, QueueConsumerError, type QueueConsumerErrorCode } from "./src/errors.ts";
export { type IndexFields, indexFields } from "./src/index-fields.ts";
export {
  BIN_ORIGIN,
  claimIndexVersion,
  ensureIndexSchema,
  INDEX_SCHEMA_VERSION,
  INDEX_TABLES,
  INDEX_VERSION_SETTING,
  indexSchemaDdl,
  principalPostingsInsert,
  WRITER_VERSION_REFUSED,
} from "./src/index-schema.ts";
export { type ObjectKeyParts, objectKey, parseObjectKey } from "./src/object-key.ts";
export { type OffsetGap, OffsetGapWatch, type PartitionPosition } from "./src/offset-gaps.ts";
export {
  batchEvents,
  type ClosedBatch,
  EVENTS_PER_CHUNK,
  type IndexedEvent,
  PartitionBatch,
  readIndexFields,
  type SealedBatch,
} from "./src/partition-batch.ts";
export { checkPrincipalPostings, type PostingsCheck } from "./src/postings-check.ts";
export { putBatchObject, type WrittenObject } from "./src/put-batch-object.ts";
export {
  type BatchWritten,
  type QueueConsumer,
  type QueueConsumerEvents,
  type StartConsumerOptions,
  startConsumer,
} from "./src/queue-consumer.ts";
export { type RebuildSummary, type RebuildTarget, rebuildIndex } from "./src/rebuild-index.ts";
export { readerS3Client, writerS3Client } from "./src/s3-client.ts";
export { tenantKeys } from "./src/tenant-keys.ts";
export { type IndexedBatch, writeBatchIndex } from "./src/write-index.ts";
