import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { BenchError } from "../../src/errors.ts";
import { benchEnv, consumerEnv } from "../../src/pipeline/services.ts";

test("benchEnv reads space-separated NAME=value pairs; a value may hold = and be empty", () => {
  expect(
    benchEnv("X", " SVC_AUDIT_WRITE_CONCURRENCY=4  SVC_AUDIT_PG_URL=postgres://a?b=c SVC_AUDIT_KEY_PREFIX= "),
  ).toEqual({
    SVC_AUDIT_WRITE_CONCURRENCY: "4",
    SVC_AUDIT_PG_URL: "postgres://a?b=c",
    SVC_AUDIT_KEY_PREFIX: "",
  });
  expect(benchEnv("X", "")).toEqual({});
});

test.each(["SVC_AUDIT_WRITE_CONCURRENCY", "=4"])(
  "benchEnv refuses %p (no name or no =) with BENCH_ARGS_INVALID",
  (pair) => {
    const error = thrownBy(() => benchEnv("SVC_BENCH_CONSUMER_ENV", `SVC_AUDIT_LOG_LEVEL=info ${pair}`), BenchError);
    expect(error.code).toBe("BENCH_ARGS_INVALID");
    expect(error.subject).toBe("SVC_BENCH_CONSUMER_ENV");
  },
);

test("SVC_BENCH_CONSUMER_ENV overrides the consumer's settings from the bench", () => {
  const before = process.env.SVC_BENCH_CONSUMER_ENV;
  process.env.SVC_BENCH_CONSUMER_ENV = "SVC_AUDIT_WRITE_CONCURRENCY=4 SVC_AUDIT_BATCH_MAX_AGE_MS=2500";
  try {
    const env = consumerEnv({
      brokers: "127.0.0.1:9092",
      topic: "t",
      groupId: "g",
      s3: { endpoint: "http://127.0.0.1:9000", region: "us-east-1", accessKeyId: "a", secretAccessKey: "s" },
      bucket: "b",
      keyPrefix: "p/",
      pgUrl: "postgres://x",
      indexSchema: "s",
      batchMaxAgeMs: 1000,
    });
    expect(env.SVC_AUDIT_WRITE_CONCURRENCY).toBe("4");
    expect(env.SVC_AUDIT_BATCH_MAX_AGE_MS).toBe("2500");
    expect(env.SVC_AUDIT_TOPIC).toBe("t");
  } finally {
    if (before === undefined) delete process.env.SVC_BENCH_CONSUMER_ENV;
    else process.env.SVC_BENCH_CONSUMER_ENV = before;
  }
});
