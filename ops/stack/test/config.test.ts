import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { DEFAULT_CONFIG_PATH, loadStackConfig } from "../src/config.ts";
import { StackError } from "../src/errors.ts";

const errorOf = (run: () => unknown) => thrownBy(run, StackError);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
/** A temporary directory for a config file of the test's own, removed after the test. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "stack-config-"));
  dirs.push(dir);
  return dir;
}

describe("stack config", () => {
  test("the committed defaults load, with the spec's IdP host port", () => {
    const config = loadStackConfig({});
    expect(config.keycloak.port).toBe(8082);
    expect(config.minio.buckets).toEqual(["svc-audit", "svc-kms-audit"]);
  });

  test("SVC_STACK_<SECTION>_<KEY> and IDP_BOOTSTRAP_ADMIN_PASSWORD override the file", () => {
    const config = loadStackConfig({ SVC_STACK_KAFKA_PORT: "19092", IDP_BOOTSTRAP_ADMIN_PASSWORD: "rotated-pw" });
    expect(config.kafka.port).toBe(19092);
    expect(config.keycloak.admin_password).toBe("rotated-pw");
  });

  test("a bad value names its field and is refused", () => {
    const error = errorOf(() => loadStackConfig({ SVC_STACK_KAFKA_PORT: "not-a-port" }));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe("/kafka/port");
  });

  test("an unknown field is refused", () => {
    const dir = tempDir();
    const file = join(dir, "stack.toml");
    writeFileSync(file, `${readFileSync(DEFAULT_CONFIG_PATH, "utf8")}\n[extra]\nx = 1\n`);
    const error = errorOf(() => loadStackConfig({}, file));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
  });

  test("Kafka and Keycloak heaps, and Kafka's topics and retention, come from the file", () => {
    const config = loadStackConfig({});
    expect(config.kafka.heap_mb).toBe(768);
    expect(config.keycloak.heap_mb).toBe(512);
    expect(config.kafka.topic_partitions).toBe(6);
    expect(config.kafka.topics).toEqual([
      "svc.audit.events.v1",
      "svc.audit.events.v1.dlq",
      "svc.kms.audit.events.v1",
      "svc.kms.audit.events.v1.dlq",
    ]);
    expect(config.kafka.retention_bytes).toBeGreaterThanOrEqual(config.kafka.segment_bytes);
  });

  test("SVC_STACK_KAFKA_HEAP_MB, SVC_STACK_KEYCLOAK_HEAP_MB and SVC_STACK_KAFKA_TOPIC_PARTITIONS override the file", () => {
    const config = loadStackConfig({
      SVC_STACK_KAFKA_HEAP_MB: "1024",
      SVC_STACK_KEYCLOAK_HEAP_MB: "640",
      SVC_STACK_KAFKA_TOPIC_PARTITIONS: "12",
    });
    expect(config.kafka.heap_mb).toBe(1024);
    expect(config.keycloak.heap_mb).toBe(640);
    expect(config.kafka.topic_partitions).toBe(12);
  });

  test.each([
    ["SVC_STACK_KAFKA_HEAP_MB", "64", "/kafka/heap_mb"],
    ["SVC_STACK_KAFKA_HEAP_MB", "1g", "/kafka/heap_mb"],
    ["SVC_STACK_KEYCLOAK_HEAP_MB", "100", "/keycloak/heap_mb"],
    ["SVC_STACK_KAFKA_TOPIC_PARTITIONS", "0", "/kafka/topic_partitions"],
    ["SVC_STACK_KAFKA_SEGMENT_BYTES", "1024", "/kafka/segment_bytes"],
    ["SVC_STACK_KAFKA_SEGMENT_BYTES", String(2 ** 31), "/kafka/segment_bytes"],
    ["SVC_STACK_KAFKA_RETENTION_HOURS", "0", "/kafka/retention_hours"],
  ])("%s=%s is refused at %s", (key, value, path) => {
    const error = errorOf(() => loadStackConfig({ [key]: value }));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe(path);
  });

  test.each([
    ["an illegal character", ["svc audit"]],
    ["the name '..'", [".."]],
    ["a name of 250 characters", ["a".repeat(250)]],
    ["a name twice", ["svc.audit.events.v1", "svc.audit.events.v1"]],
  ])("a topic list with %s is refused", (_, topics) => {
    const dir = tempDir();
    const file = join(dir, "stack.toml");
    const text = readFileSync(DEFAULT_CONFIG_PATH, "utf8").replace(
      /^topics = .*$/m,
      `topics = ${JSON.stringify(topics)}`,
    );
    writeFileSync(file, text);
    const error = errorOf(() => loadStackConfig({}, file));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toStartWith("/kafka/topics");
  });

  test("a missing config file is a config error naming the path", () => {
    const error = errorOf(() => loadStackConfig({}, "/nonexistent/stack.toml"));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe("/nonexistent/stack.toml");
  });
});
