import { parseQueueConsumerConfig, type QueueConsumerConfig } from "./config.ts";
import type { QueueConsumer } from "./queue-consumer.ts";

// Wiring only: config → consumer (index schema, S3, Kafka group, metrics) → signal handling.
let config: QueueConsumerConfig;
try {
  config = parseQueueConsumerConfig(process.env);
} catch (error) {
  process.stderr.write(`audit-writer: ${(error as Error).message}\n`);
  process.exit(2);
}

// Loaded after the config is valid, so a bad value is reported at once (the S3 and Kafka clients are large).
const [{ default: pino }, { startConsumer }] = await Promise.all([import("pino"), import("./queue-consumer.ts")]);
const logger = pino({ level: config.logLevel, base: { component: "audit-writer", pid: process.pid } });
let consumer: QueueConsumer;
try {
  consumer = await startConsumer(config, { logger });
} catch (error) {
  logger.fatal({ err: error }, "consumer did not start");
  process.exit(1);
}
logger.info({ topic: config.topic, group: config.groupId, metrics: consumer.metricsUrl }, "consuming");

const shutdown = (signal: string) => {
  logger.info({ signal }, "shutting down: writing open batches, committing");
  consumer.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: error }, "shutdown incomplete");
      process.exit(1);
    },
  );
};
process.once("SIGTERM", () => shutdown("SIGTERM"));
process.once("SIGINT", () => shutdown("SIGINT"));

consumer.done.then(
  () => process.exit(0),
  () => process.exit(1),
);
