import { expect, test } from "bun:test";
import { loadStackConfig } from "../src/config.ts";
import { INTERNAL_TOPIC_PARTITIONS, serverProperties } from "../src/kafka-properties.ts";

function parse(text: string): Map<string, string> {
  const entries = text
    .split("\n")
    .filter((line) => line.includes("="))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const);
  return new Map(entries);
}

test("a single broker's internal topics are small: 4 partitions for offsets, transactions and share state", () => {
  const props = parse(serverProperties(loadStackConfig({}).kafka, "/data"));
  expect(INTERNAL_TOPIC_PARTITIONS).toBe(4);
  expect(props.get("offsets.topic.num.partitions")).toBe("4");
  expect(props.get("transaction.state.log.num.partitions")).toBe("4");
  expect(props.get("share.coordinator.state.topic.num.partitions")).toBe("4");
  expect(props.get("offsets.topic.replication.factor")).toBe("1");
  expect(props.get("auto.create.topics.enable")).toBe("false");
});

test("retention, segment size, default partitions and ports come from the stack config", () => {
  const kafka = loadStackConfig({
    SVC_STACK_KAFKA_PORT: "19092",
    SVC_STACK_KAFKA_CONTROLLER_PORT: "19093",
    SVC_STACK_KAFKA_TOPIC_PARTITIONS: "3",
    SVC_STACK_KAFKA_RETENTION_HOURS: "6",
    SVC_STACK_KAFKA_RETENTION_BYTES: String(64 * 1024 * 1024),
    SVC_STACK_KAFKA_SEGMENT_BYTES: String(16 * 1024 * 1024),
  }).kafka;
  const props = parse(serverProperties(kafka, "/var/kafka"));
  expect(props.get("log.retention.hours")).toBe("6");
  expect(props.get("log.retention.bytes")).toBe("67108864");
  expect(props.get("log.segment.bytes")).toBe("16777216");
  expect(props.get("num.partitions")).toBe("3");
  expect(props.get("log.dirs")).toBe("/var/kafka");
  expect(props.get("listeners")).toBe("PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093");
  expect(props.get("controller.quorum.voters")).toBe("1@127.0.0.1:19093");
});
