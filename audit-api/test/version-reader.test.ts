/**
 * The presigned-URL reader (src/version-reader.ts) on the stack's MinIO: ranges and whole objects, one signature per
 * version, and each failure path — a version that does not exist (404, not retried), 5xx (retried, then
 * retriable), a wrong secret and an expired URL (403: signed again once, then a clear error), no answer (a listener
 * that hangs up), a server that ignores `Range`. The 5xx answers and the ignored Range come from a small proxy in
 * front of MinIO (MinIO cannot be made to answer 503 on demand); everything else reaches MinIO itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { hangUpListener, rejectionOf, stackEnv } from "@svc/testkit";
import { AuditApiError, VersionReader } from "../index.ts";
import { minioProxy, s3At } from "./support/minio-proxy.ts";
import { storageNames, testS3 } from "./support/stored-data.ts";

const BUCKET = "svc-audit";
const names = storageNames("vread");
const key = `${names.keyPrefix}lines.jsonl`;
const content = Buffer.from(Array.from({ length: 200 }, (_, i) => `{"id":"line-${i}"}`).join("\n"));
let s3: S3Client;
let versionId: string;

const slowDown = () =>
  new Response("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>", {
    status: 503,
    headers: { "content-type": "application/xml" },
  });

beforeAll(async () => {
  s3 = testS3();
  const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: content }));
  if (!put.VersionId) throw new Error("the bucket is not versioned");
  versionId = put.VersionId;
});

afterAll(() => {
  s3?.destroy();
});

describe("reads", () => {
  test("ranges and the whole object of a version, one signature for all of them", async () => {
    const reader = new VersionReader(s3);
    const ranges = [
      { start: 0, end: 13 },
      { start: 14, end: 27 },
      { start: 100, end: 1000 },
      { start: content.length - 5, end: content.length },
    ];
    const read = await Promise.all(ranges.map((range) => reader.read(BUCKET, key, versionId, range)));
    read.forEach((bytes, i) => {
      const range = ranges[i] as { start: number; end: number };
      expect(Buffer.from(bytes).equals(content.subarray(range.start, range.end))).toBe(true);
    });
    expect(Buffer.from(await reader.read(BUCKET, key, versionId)).equals(content)).toBe(true);
    expect(reader.signatures).toBe(1);
  });

  test("a server that ignores Range answers the whole object: the range is cut from it", async () => {
    const proxy = minioProxy(() => "strip-range");
    const reader = new VersionReader(s3At(proxy.url));
    try {
      const bytes = await reader.read(BUCKET, key, versionId, { start: 14, end: 27 });
      expect(Buffer.from(bytes).equals(content.subarray(14, 27))).toBe(true);
    } finally {
      proxy.stop();
    }
  });
});

describe("failures", () => {
  test("a version that does not exist: OBJECT_READ_FAILED, not retriable, one GET", async () => {
    const proxy = minioProxy(() => undefined);
    const reader = new VersionReader(s3At(proxy.url));
    try {
      const error = await rejectionOf(
        reader.read(BUCKET, key, crypto.randomUUID(), { start: 0, end: 10 }),
        AuditApiError,
      );
      expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
      expect(error.canRetry).toBe(false);
      expect(error.subject).toBe(key);
      expect(error.message).toContain("HTTP 404");
      expect(proxy.requests).toBe(1);
    } finally {
      proxy.stop();
    }
  });

  test("5xx: retried with backoff; a passing retry answers the bytes", async () => {
    const proxy = minioProxy((n) => (n <= 2 ? slowDown() : undefined));
    const reader = new VersionReader(s3At(proxy.url));
    try {
      const bytes = await reader.read(BUCKET, key, versionId, { start: 0, end: 13 });
      expect(Buffer.from(bytes).equals(content.subarray(0, 13))).toBe(true);
      expect(proxy.requests).toBe(3);
    } finally {
      proxy.stop();
    }
  });

  test("5xx on every attempt: OBJECT_READ_FAILED, retriable, naming S3's code and the attempts", async () => {
    const proxy = minioProxy(slowDown);
    const reader = new VersionReader(s3At(proxy.url), { maxAttempts: 2 });
    try {
      const error = await rejectionOf(reader.read(BUCKET, key, versionId, { start: 0, end: 13 }), AuditApiError);
      expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
      expect(error.canRetry).toBe(true);
      expect(error.message).toContain("SlowDown");
      expect(error.message).toContain("2 attempts");
      expect(proxy.requests).toBe(2);
    } finally {
      proxy.stop();
    }
  });

  test("a wrong secret: signed again once, then OBJECT_READ_FAILED naming SignatureDoesNotMatch, not retriable", async () => {
    const reader = new VersionReader(s3At(stackEnv().s3.endpoint, "not-the-secret-key"));
    const error = await rejectionOf(reader.read(BUCKET, key, versionId, { start: 0, end: 13 }), AuditApiError);
    expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
    expect(error.canRetry).toBe(false);
    expect(error.message).toContain("SignatureDoesNotMatch");
    expect(error.message).toContain("HTTP 403");
    expect(reader.signatures).toBe(2);
  });

  test("an expired URL: OBJECT_READ_FAILED saying so; a URL that expired in the cache is signed again and read", async () => {
    const hourAgo = () => new Date(Date.now() - 3_600_000);
    const expired = new VersionReader(s3, { signingDate: hourAgo });
    const error = await rejectionOf(expired.read(BUCKET, key, versionId, { start: 0, end: 13 }), AuditApiError);
    expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
    expect(error.canRetry).toBe(false);
    expect(error.message.toLowerCase()).toContain("expired");
    expect(expired.signatures).toBe(2);

    // The first URL is an hour old (as a cached URL whose credentials expired), the second one fresh.
    let calls = 0;
    const recovering = new VersionReader(s3, { signingDate: () => (calls++ === 0 ? hourAgo() : new Date()) });
    const bytes = await recovering.read(BUCKET, key, versionId, { start: 0, end: 13 });
    expect(Buffer.from(bytes).equals(content.subarray(0, 13))).toBe(true);
    expect(recovering.signatures).toBe(2);
  });

  test("no answer (a listener that hangs up): OBJECT_READ_FAILED, retriable, after every attempt", async () => {
    const listener = hangUpListener();
    const reader = new VersionReader(s3At(listener.url), { maxAttempts: 2 });
    try {
      const error = await rejectionOf(reader.read(BUCKET, key, versionId, { start: 0, end: 13 }), AuditApiError);
      expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
      expect(error.canRetry).toBe(true);
      expect(error.message).toContain("no answer, 2 attempts");
    } finally {
      listener.stop();
    }
  });

  test("a server that accepts and never answers: cut after timeoutMs, OBJECT_READ_FAILED, retriable", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const reader = new VersionReader(s3At(`http://127.0.0.1:${silent.port}`), { maxAttempts: 2, timeoutMs: 200 });
    try {
      const started = performance.now();
      const error = await rejectionOf(reader.read(BUCKET, key, versionId, { start: 0, end: 13 }), AuditApiError);
      expect(error.code).toBe("AUDIT_API_OBJECT_READ_FAILED");
      expect(error.canRetry).toBe(true);
      expect(error.message).toContain("no answer within 200 ms");
      expect(error.message).toContain("2 attempts");
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      silent.stop(true);
    }
  });

  test("URL reuse must stay well inside the URL's lifetime", () => {
    expect(() => new VersionReader(s3, { urlSeconds: 60, reuseMs: 45_000 })).toThrow(RangeError);
    expect(() => new VersionReader(s3, { urlSeconds: 60, reuseMs: 30_000 })).not.toThrow();
  });
});
