import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir, thrownBy } from "@svc/testkit";
import { AgentError, parseAgentConfig } from "../index.ts";
import { spawnAgent } from "./support/spawn-agent.ts";

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir("config");
});
afterAll(async () => {
  await dir.remove();
});

const topic = "svc.audit.events.v1";
const baseEnv = () => ({
  SVC_AGENT_KAFKA_BROKERS: "127.0.0.1:9",
  SVC_AGENT_TOPIC: topic,
  SVC_AGENT_METRICS_PORT: "0",
});

describe("agent configuration", () => {
  test("defaults: the audit topic, its .dlq, 512 KiB batches, 4 MiB in flight", () => {
    const config = parseAgentConfig({ SVC_AGENT_SOURCE: "-", SVC_AGENT_KAFKA_BROKERS: "a:1,b:2" });
    expect(config).toMatchObject({
      source: "-",
      brokers: ["a:1", "b:2"],
      topic: "svc.audit.events.v1",
      dlqTopic: "svc.audit.events.v1.dlq",
      checkpointFile: undefined,
      batchBytes: 512 * 1024,
      maxInFlightBytes: 4 * 1024 * 1024,
    });
    const error = thrownBy(() => parseAgentConfig({ SVC_AGENT_SOURCE: "-", SVC_AGENT_KAFKA_BROKERS: "a" }), AgentError);
    expect(error.code).toBe("AGENT_CONFIG_INVALID");
    expect(error.subject).toBe("SVC_AGENT_KAFKA_BROKERS");
  });

  test("a batch and a line that together pass the topics' message limit are refused, naming the batch size", () => {
    const env = { SVC_AGENT_SOURCE: "-", SVC_AGENT_KAFKA_BROKERS: "a:1" };
    // 768 KiB + 512 KiB with framing passes Kafka's default 1048588 bytes.
    const tooLarge = thrownBy(
      () =>
        parseAgentConfig({
          ...env,
          SVC_AGENT_BATCH_BYTES: String(768 * 1024),
          SVC_AGENT_MAX_LINE_BYTES: String(512 * 1024),
        }),
      AgentError,
    );
    expect(tooLarge.code).toBe("AGENT_CONFIG_INVALID");
    expect(tooLarge.subject).toBe("SVC_AGENT_BATCH_BYTES");
    expect(tooLarge.message).toContain("SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES (1048588)");
    // The same sizes are taken once the topics accept 2 MiB messages; the largest default-limit pair is taken too.
    const raised = parseAgentConfig({
      ...env,
      SVC_AGENT_BATCH_BYTES: String(768 * 1024),
      SVC_AGENT_MAX_LINE_BYTES: String(512 * 1024),
      SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES: String(2 * 1024 * 1024),
    });
    expect(raised.batchBytes).toBe(768 * 1024);
    expect(parseAgentConfig({ ...env, SVC_AGENT_BATCH_BYTES: String(768 * 1024) }).maxLineBytes).toBe(64 * 1024);
  });

  test("each bad config value exits non-zero naming the field", async () => {
    const good = {
      ...baseEnv(),
      SVC_AGENT_SOURCE: join(dir.path, "x.jsonl"),
      SVC_AGENT_CHECKPOINT_FILE: join(dir.path, "x.cp"),
    };
    const cases: [string, Record<string, string | undefined>][] = [
      ["SVC_AGENT_SOURCE", { SVC_AGENT_SOURCE: undefined }],
      ["SVC_AGENT_KAFKA_BROKERS", { SVC_AGENT_KAFKA_BROKERS: "no-port" }],
      ["SVC_AGENT_TOPIC", { SVC_AGENT_TOPIC: "bad topic!" }],
      ["SVC_AGENT_DLQ_TOPIC", { SVC_AGENT_DLQ_TOPIC: topic }],
      ["SVC_AGENT_CHECKPOINT_FILE", { SVC_AGENT_CHECKPOINT_FILE: undefined }],
      ["SVC_AGENT_MAX_LINE_BYTES", { SVC_AGENT_MAX_LINE_BYTES: "12" }],
      ["SVC_AGENT_BATCH_BYTES", { SVC_AGENT_BATCH_BYTES: "1MB" }],
      ["SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES", { SVC_AGENT_KAFKA_MAX_MESSAGE_BYTES: "1000" }],
      ["SVC_AGENT_SEND_CONCURRENCY", { SVC_AGENT_SEND_CONCURRENCY: "6" }],
      ["SVC_AGENT_LINGER_MS", { SVC_AGENT_LINGER_MS: "-1" }],
      ["SVC_AGENT_MAX_IN_FLIGHT_BYTES", { SVC_AGENT_MAX_IN_FLIGHT_BYTES: "5000" }],
      ["SVC_AGENT_POLL_MS", { SVC_AGENT_POLL_MS: "0" }],
      ["SVC_AGENT_ROTATE_GRACE_MS", { SVC_AGENT_ROTATE_GRACE_MS: "x" }],
      ["SVC_AGENT_KAFKA_TIMEOUT_MS", { SVC_AGENT_KAFKA_TIMEOUT_MS: "5" }],
      ["SVC_AGENT_SHUTDOWN_TIMEOUT_MS", { SVC_AGENT_SHUTDOWN_TIMEOUT_MS: "1e3" }],
      ["SVC_AGENT_STOP_READ_MS", { SVC_AGENT_STOP_READ_MS: "-5" }],
      ["SVC_AGENT_METRICS_PORT", { SVC_AGENT_METRICS_PORT: "70000" }],
      ["SVC_AGENT_METRICS_HOST", { SVC_AGENT_METRICS_HOST: "http://127.0.0.1:9464" }],
      ["SVC_AGENT_CLIENT_ID", { SVC_AGENT_CLIENT_ID: "a b" }],
      ["SVC_AGENT_LOG_LEVEL", { SVC_AGENT_LOG_LEVEL: "loud" }],
    ];
    // Four at a time: a spawned Bun per case, on a machine of two cores.
    for (let at = 0; at < cases.length; at += 4) {
      await Promise.all(
        cases.slice(at, at + 4).map(async ([field, change]) => {
          const env: Record<string, string> = {};
          for (const [key, value] of Object.entries({ ...good, ...change })) if (value !== undefined) env[key] = value;
          const child = spawnAgent(env);
          const code = await child.exited;
          expect({ field, code }).toEqual({ field, code: 2 });
          // The message starts with the field (`audit-logagent: <field>: …`): another field named inside a message
          // about the right one would not do.
          expect({ field, stderr: child.stderr() }).toEqual({ field, stderr: expect.stringContaining(`: ${field}: `) });
        }),
      );
    }
  });
});
