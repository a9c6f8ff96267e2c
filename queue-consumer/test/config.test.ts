import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { thrownBy } from "@svc/testkit";
import { parseQueueConsumerConfig, QueueConsumerError } from "../index.ts";

const MAIN = new URL("../src/main.ts", import.meta.url).pathname;

const VALID = {
  SVC_AUDIT_KAFKA_BROKERS: "127.0.0.1:9092",
  SVC_AUDIT_PG_URL: "postgres://svc:svc@127.0.0.1:5432/svc",
  SVC_AUDIT_RETENTION_DAYS: "7",
};

describe("parseQueueConsumerConfig", () => {
  test("defaults follow docs/audit-storage.md", () => {
    const config = parseQueueConsumerConfig(VALID);
    expect(config.topic).toBe("svc.audit.events.v1");
    expect(config.groupId).toBe("svc-audit-writer");
    expect(config.bucket).toBe("svc-audit");
    expect(config.indexSchema).toBe("audit");
    expect(config.batch).toEqual({ maxBytes: 16 * 1024 * 1024, maxRecords: 100_000, maxAgeMs: 9_000 });
    expect(config.maxBufferedBytes).toBe(6 * 16 * 1024 * 1024);
    expect(config.retentionDays).toBe(7);
    expect(config.compression).toBe("none");
    expect(config.keyPrefix).toBe("");
    expect(config.s3.credentials).toBeUndefined();
    expect(config.spoolDir).toBe(tmpdir());
  });

  test("batches spool under SVC_AUDIT_SPOOL_DIR, or stay in the heap with SVC_AUDIT_BATCH_SPOOL=memory", () => {
    expect(parseQueueConsumerConfig({ ...VALID, SVC_AUDIT_SPOOL_DIR: "/var/spool/svc" }).spoolDir).toBe(
      "/var/spool/svc",
    );
    expect(parseQueueConsumerConfig({ ...VALID, SVC_AUDIT_BATCH_SPOOL: "memory" }).spoolDir).toBeUndefined();
  });

  test("the KMS instance is the same program with other settings", () => {
    const config = parseQueueConsumerConfig({
      ...VALID,
      SVC_AUDIT_TOPIC: "svc.kms.audit.events.v1",
      SVC_AUDIT_BUCKET: "svc-kms-audit",
      SVC_AUDIT_GROUP_ID: "svc-kms-audit-writer",
      SVC_AUDIT_INDEX_SCHEMA: "kms_audit",
      SVC_AUDIT_S3_ACCESS_KEY: "a",
      SVC_AUDIT_S3_SECRET_KEY: "b",
    });
    expect([config.topic, config.bucket, config.groupId, config.indexSchema]).toEqual([
      "svc.kms.audit.events.v1",
      "svc-kms-audit",
      "svc-kms-audit-writer",
      "kms_audit",
    ]);
    expect(config.s3.credentials).toEqual({ accessKeyId: "a", secretAccessKey: "b" });
  });

  test("payload signing: auto signs the body's SHA-256 over http to another host only; signed and unsigned as set", () => {
    const signing = (env: Record<string, string>) => parseQueueConsumerConfig({ ...VALID, ...env }).s3.payloadSigning;
    expect(signing({})).toBe("unsigned"); // AWS's https endpoints
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "https://s3.example.net" })).toBe("unsigned");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://127.0.0.1:9000" })).toBe("unsigned");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://localhost:9000" })).toBe("unsigned");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://[::1]:9000" })).toBe("unsigned");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://minio.storage:9000" })).toBe("signed");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://127.0.0.1.example.net:9000" })).toBe("signed");
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "http://minio:9000", SVC_AUDIT_S3_PAYLOAD_SIGNING: "unsigned" })).toBe(
      "unsigned",
    );
    expect(signing({ SVC_AUDIT_S3_ENDPOINT: "https://s3.example.net", SVC_AUDIT_S3_PAYLOAD_SIGNING: "signed" })).toBe(
      "signed",
    );
  });

  test("a shutdown timeout of a second is the least taken", () => {
    expect(parseQueueConsumerConfig({ ...VALID, SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: "1000" }).shutdownTimeoutMs).toBe(1_000);
  });

  const bad: [string, Record<string, string | undefined>][] = [
    ["SVC_AUDIT_S3_PAYLOAD_SIGNING", { SVC_AUDIT_S3_PAYLOAD_SIGNING: "sometimes" }],
    ["SVC_AUDIT_KAFKA_BROKERS", { SVC_AUDIT_KAFKA_BROKERS: "no-port" }],
    ["SVC_AUDIT_KAFKA_BROKERS", { SVC_AUDIT_KAFKA_BROKERS: undefined }],
    ["SVC_AUDIT_RETENTION_DAYS", { SVC_AUDIT_RETENTION_DAYS: undefined }],
    ["SVC_AUDIT_RETENTION_DAYS", { SVC_AUDIT_RETENTION_DAYS: "0" }],
    ["SVC_AUDIT_RETENTION_DAYS", { SVC_AUDIT_RETENTION_DAYS: "1.5" }],
    ["SVC_AUDIT_PG_URL", { SVC_AUDIT_PG_URL: "mysql://x" }],
    ["SVC_AUDIT_INDEX_SCHEMA", { SVC_AUDIT_INDEX_SCHEMA: 'audit"; drop' }],
    ["SVC_AUDIT_BUCKET", { SVC_AUDIT_BUCKET: "Bad_Bucket" }],
    ["SVC_AUDIT_KEY_PREFIX", { SVC_AUDIT_KEY_PREFIX: "no-trailing-slash" }],
    ["SVC_AUDIT_OBJECT_COMPRESSION", { SVC_AUDIT_OBJECT_COMPRESSION: "zstd" }],
    ["SVC_AUDIT_BATCH_MAX_BYTES", { SVC_AUDIT_BATCH_MAX_BYTES: "12" }],
    ["SVC_AUDIT_BATCH_MAX_RECORDS", { SVC_AUDIT_BATCH_MAX_RECORDS: "0" }],
    ["SVC_AUDIT_BATCH_MAX_AGE_MS", { SVC_AUDIT_BATCH_MAX_AGE_MS: "ten" }],
    ["SVC_AUDIT_WRITE_CONCURRENCY", { SVC_AUDIT_WRITE_CONCURRENCY: "0" }],
    ["SVC_AUDIT_WRITE_CONCURRENCY", { SVC_AUDIT_WRITE_CONCURRENCY: "65" }],
    ["SVC_AUDIT_MAX_BUFFERED_BYTES", { SVC_AUDIT_BATCH_MAX_BYTES: "4096", SVC_AUDIT_MAX_BUFFERED_BYTES: "4096" }],
    ["SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS", { SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "100" }],
    ["SVC_AUDIT_S3_SECRET_KEY", { SVC_AUDIT_S3_ACCESS_KEY: "only-one" }],
    ["SVC_AUDIT_S3_ACCESS_KEY", { SVC_AUDIT_S3_SECRET_KEY: "only-one" }],
    ["SVC_AUDIT_S3_REGION", { SVC_AUDIT_S3_REGION: "us east 1" }],
    ["SVC_AUDIT_METRICS_HOST", { SVC_AUDIT_METRICS_HOST: "0.0.0.0:9464" }],
    ["SVC_AUDIT_S3_ENDPOINT", { SVC_AUDIT_S3_ENDPOINT: "ftp://x" }],
    ["SVC_AUDIT_S3_ENDPOINT", { SVC_AUDIT_S3_ENDPOINT: "http://[not-a-host" }],
    ["SVC_AUDIT_METRICS_PORT", { SVC_AUDIT_METRICS_PORT: "70000" }],
    ["SVC_AUDIT_LOG_LEVEL", { SVC_AUDIT_LOG_LEVEL: "loud" }],
    ["SVC_AUDIT_BATCH_SPOOL", { SVC_AUDIT_BATCH_SPOOL: "disk" }],
    ["SVC_AUDIT_SPOOL_DIR", { SVC_AUDIT_SPOOL_DIR: "relative/spool" }],
    ["SVC_AUDIT_TOPIC", { SVC_AUDIT_TOPIC: "no spaces" }],
    ["SVC_AUDIT_GROUP_ID", { SVC_AUDIT_GROUP_ID: "group/with/slashes" }],
    ["SVC_AUDIT_CLIENT_ID", { SVC_AUDIT_CLIENT_ID: "x".repeat(129) }],
    ["SVC_AUDIT_S3_FORCE_PATH_STYLE", { SVC_AUDIT_S3_FORCE_PATH_STYLE: "yes" }],
    ["SVC_AUDIT_PG_POOL", { SVC_AUDIT_PG_POOL: "0" }],
    ["SVC_AUDIT_RETRY_MAX_MS", { SVC_AUDIT_RETRY_MAX_MS: "5" }],
    ["SVC_AUDIT_SHUTDOWN_TIMEOUT_MS", { SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: "-1" }],
    ["SVC_AUDIT_SHUTDOWN_TIMEOUT_MS", { SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: "0" }],
    ["SVC_AUDIT_SHUTDOWN_TIMEOUT_MS", { SVC_AUDIT_SHUTDOWN_TIMEOUT_MS: "999" }],
    ["SVC_AUDIT_S3_PUT_TIMEOUT_MS", { SVC_AUDIT_S3_PUT_TIMEOUT_MS: "soon" }],
  ];
  for (const [field, change] of bad) {
    test(`${field}=${JSON.stringify(Object.values(change)[0])} is refused naming the field`, () => {
      const error = thrownBy(() => parseQueueConsumerConfig({ ...VALID, ...change }), QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_CONFIG_INVALID");
      expect(error.subject).toBe(field);
      expect(error.message).toContain(field);
    });
  }

  test("main exits 2 naming each bad field", async () => {
    const runs = bad.map(async ([field, change]) => {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries({ ...process.env, ...VALID, ...change })) {
        if (value !== undefined && !(key.startsWith("SVC_AUDIT_") && !(key in VALID) && !(key in change))) {
          env[key] = value;
        }
      }
      const child = Bun.spawn([process.execPath, "run", MAIN], { env, stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      return { field, code, stderr };
    });
    for (const { field, code, stderr } of await Promise.all(runs)) {
      expect(code, field).toBe(2);
      expect(stderr, field).toContain(`: ${field}: `);
    }
  });
});
