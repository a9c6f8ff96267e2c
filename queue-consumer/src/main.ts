import { runService } from "@svc/common";
import { pino } from "pino";
import { parseQueueConsumerConfig } from "./config.ts";

// Wiring only: config → consumer (index schema, S3, Kafka group, metrics); runService owns exit codes and signals.
// The consumer (S3 and Kafka clients are large) loads after the settings are checked.
await runService({
  name: "audit-writer",
  parseConfig: () => parseQueueConsumerConfig(process.env),
  createLogger: (config) => pino({ level: config.logLevel, base: { component: "audit-writer", pid: process.pid } }),
  start: async (config, logger) => {
    const { startConsumer } = await import("./queue-consumer.ts");
    return startConsumer(config, { logger });
  },
  started: (consumer, config) => ({ topic: config.topic, group: config.groupId, metrics: consumer.metricsUrl }),
});
