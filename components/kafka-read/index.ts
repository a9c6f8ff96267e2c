export { KAFKA_READ_ERROR_CODES, KafkaReadError, type KafkaReadErrorCode } from "./src/errors.ts";
export { type FetcherOptions, PartitionFetcher } from "./src/partition-fetcher.ts";
