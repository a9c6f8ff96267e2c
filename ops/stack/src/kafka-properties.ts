import type { StackConfig } from "./config.ts";

/**
 * Partitions of the broker's internal topics. Kafka's defaults (50 for consumer offsets, 50 for transactions)
 * suit a cluster; on one broker they are 100 logs to open, load and clean for nothing.
 */
export const INTERNAL_TOPIC_PARTITIONS = 4;

/** server.properties of the single KRaft node (broker and controller in one process). */
export function serverProperties(kafka: StackConfig["kafka"], logDir: string): string {
  const { port, controller_port, topic_partitions, retention_hours, retention_bytes, segment_bytes } = kafka;
  return [
    "process.roles=broker,controller",
    "node.id=1",
    `controller.quorum.voters=1@127.0.0.1:${controller_port}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller_port}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    "controller.listener.names=CONTROLLER",
    "inter.broker.listener.name=PLAINTEXT",
    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    `log.dirs=${logDir}`,
    // Topics that clients create without naming a count get as many partitions as the stack's own topics.
    `num.partitions=${topic_partitions}`,
    `offsets.topic.num.partitions=${INTERNAL_TOPIC_PARTITIONS}`,
    `transaction.state.log.num.partitions=${INTERNAL_TOPIC_PARTITIONS}`,
    `share.coordinator.state.topic.num.partitions=${INTERNAL_TOPIC_PARTITIONS}`,
    "offsets.topic.replication.factor=1",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    "share.coordinator.state.topic.replication.factor=1",
    "share.coordinator.state.topic.min.isr=1",
    // Retention for a developer's disk: a partition keeps at most retention_bytes plus its active segment.
    `log.retention.hours=${retention_hours}`,
    `log.retention.bytes=${retention_bytes}`,
    `log.segment.bytes=${segment_bytes}`,
    "log.retention.check.interval.ms=60000",
    "group.initial.rebalance.delay.ms=0",
    "auto.create.topics.enable=false",
    "",
  ].join("\n");
}
