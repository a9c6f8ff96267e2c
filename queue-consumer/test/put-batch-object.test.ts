import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { crc32, gunzipSync } from "node:zlib";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { hangUpListener, rejectionOf, tempDir } from "@svc/testkit";
import { BatchSpool, PartitionBatch, putBatchObject, QueueConsumerError } from "../index.ts";
import { crc32Checksum } from "../src/put-batch-object.ts";
import { writerS3Client } from "../src/s3-client.ts";
import { bodyOf, listVersions, makeLines, s3Client, stackAddresses, testNames, writerClient } from "./helpers.ts";
import { s3ErrorServer } from "./s3-error-server.ts";

const addresses = stackAddresses();
const s3 = s3Client(addresses);
const writer = writerClient(addresses);
const names = testNames("put");
const settings = { bucket: "svc-audit", keyPrefix: names.keyPrefix, retentionDays: 2, compression: "none" as const };

function sealed(count: number, firstOffset = 40n) {
  const batch = new PartitionBatch("svc.audit.events.v1", 4);
  makeLines(count).forEach((l, i) => {
    batch.add(Buffer.from(l.line), firstOffset + BigInt(i), Date.parse("2026-11-23T08:30:00Z"), 1);
  });
  return batch.seal();
}

afterAll(() => {
  s3.destroy();
  writer.destroy();
});

describe("putBatchObject", () => {
  test("COMPLIANCE lock until now + retention days, CRC-32 checksum sent, offsets in metadata; a version cannot be deleted", async () => {
    const batch = sealed(5);
    const before = Date.now();
    const written = await putBatchObject(writer, settings, batch);
    expect(written.key).toBe(
      `${names.keyPrefix}v1/svc.audit.events.v1/dt=2026-11-23/hour=08/partition=004/00000000000000000040.jsonl`,
    );
    const head = await s3.send(
      new HeadObjectCommand({
        Bucket: "svc-audit",
        Key: written.key,
        VersionId: written.versionId,
        ChecksumMode: "ENABLED",
      }),
    );
    // The checksum MinIO checked and kept is the body's CRC-32 (zlib's, as a reference), big-endian base64.
    const expected = Buffer.alloc(4);
    expected.writeUInt32BE(crc32(batch.body.contents()));
    expect(head.ChecksumCRC32).toBe(expected.toString("base64"));
    expect(head.ObjectLockMode).toBe("COMPLIANCE");
    expect(head.Metadata).toMatchObject({ "first-offset": "40", "last-offset": "44", records: "5" });
    // No time range: the PUT goes before the batch's records are read (the index has each object's range).
    expect(Object.keys(head.Metadata ?? {}).sort()).toEqual(["first-offset", "last-offset", "records"]);
    const retention = await s3.send(
      new GetObjectRetentionCommand({ Bucket: "svc-audit", Key: written.key, VersionId: written.versionId }),
    );
    expect(retention.Retention?.Mode).toBe("COMPLIANCE");
    const until = retention.Retention?.RetainUntilDate?.getTime() ?? 0;
    expect(Math.abs(until - (before + 2 * 86_400_000))).toBeLessThan(60_000);
    const body = await s3.send(new GetObjectCommand({ Bucket: "svc-audit", Key: written.key }));
    expect((await bodyOf(body)).equals(batch.body.contents())).toBe(true);
    await expect(
      s3.send(new DeleteObjectCommand({ Bucket: "svc-audit", Key: written.key, VersionId: written.versionId })),
    ).rejects.toThrow();
    const still = await s3.send(
      new HeadObjectCommand({ Bucket: "svc-audit", Key: written.key, VersionId: written.versionId }),
    );
    expect(still.VersionId).toBe(written.versionId);
  });

  test("the same batch written again lands on the same key as a second version", async () => {
    const batch = sealed(3, 900n);
    const first = await putBatchObject(writer, settings, batch);
    const again = await putBatchObject(writer, settings, batch);
    expect(again.key).toBe(first.key);
    expect(again.versionId).not.toBe(first.versionId);
    const versions = await listVersions(s3, "svc-audit", first.key);
    expect(versions.map((v) => v.VersionId).sort()).toEqual([first.versionId, again.versionId].sort());
  });

  test("a first Kafka timestamp past any Date: the batch is stored under the epoch's day and hour, on the same key again", async () => {
    const batch = new PartitionBatch("svc.audit.events.v1", 4);
    makeLines(2).forEach((l, i) => {
      batch.add(Buffer.from(l.line), 500n + BigInt(i), 8.64e15 + 1, 1);
    });
    const sealedBatch = batch.seal();
    const first = await putBatchObject(writer, settings, sealedBatch);
    expect(first.key).toBe(
      `${names.keyPrefix}v1/svc.audit.events.v1/dt=1970-01-01/hour=00/partition=004/00000000000000000500.jsonl`,
    );
    expect((await putBatchObject(writer, settings, sealedBatch)).key).toBe(first.key);
  });

  test("gzip: .jsonl.gz key, Content-Encoding gzip, the body gunzips to the JSONL; the CRC-32 sent is the gzip's", async () => {
    const client = writerClient(addresses);
    const sent = sentHeaders(client);
    try {
      const batch = sealed(4, 7000n);
      const written = await putBatchObject(client, { ...settings, compression: "gzip" }, batch);
      expect(written.key).toEndWith("/00000000000000007000.jsonl.gz");
      const object = await s3.send(
        new GetObjectCommand({
          Bucket: "svc-audit",
          Key: written.key,
          VersionId: written.versionId,
          ChecksumMode: "ENABLED",
        }),
      );
      expect(object.ContentEncoding).toBe("gzip");
      const stored = await bodyOf(object);
      // The SDK does not decode Content-Encoding: what is stored is the gzip.
      expect(gunzipSync(stored).equals(batch.body.contents())).toBe(true);
      // Under Object Lock every PUT carries a checksum header (MinIO does not insist): here the stored bytes' CRC-32.
      const expected = Buffer.alloc(4);
      expected.writeUInt32BE(crc32(stored));
      expect(sent.at(-1)?.["x-amz-checksum-crc32"]).toBe(expected.toString("base64"));
      expect(object.ChecksumCRC32).toBe(expected.toString("base64"));
    } finally {
      client.destroy();
    }
  });

  test("a spooled batch: the PUT sends its file, stored whole with its CRC-32; its file gone, QUEUE_CONSUMER_SPOOL_FAILED, not retried", async () => {
    const dir = await tempDir("qc-put-spool");
    const spool = BatchSpool.open(dir.path);
    try {
      const spooledBatch = (firstOffset: bigint) => {
        const batch = new PartitionBatch("svc.audit.events.v1", 4, spool.newBody());
        makeLines(3_000).forEach((l, i) => {
          batch.add(Buffer.from(l.line), firstOffset + BigInt(i), Date.parse("2026-11-23T08:30:00Z"), 1);
        });
        return batch.close();
      };
      const batch = spooledBatch(100_000n);
      const written = await putBatchObject(writer, settings, batch);
      const stored = await bodyOf(await s3.send(new GetObjectCommand({ Bucket: "svc-audit", Key: written.key })));
      expect(stored.equals(batch.body.contents())).toBe(true);
      expect(written.bytes).toBe(batch.body.length);
      const head = await s3.send(
        new HeadObjectCommand({ Bucket: "svc-audit", Key: written.key, ChecksumMode: "ENABLED" }),
      );
      const expected = Buffer.alloc(4);
      expected.writeUInt32BE(crc32(stored));
      expect(head.ChecksumCRC32).toBe(expected.toString("base64"));

      const gone = spooledBatch(200_000n);
      gone.body.discard();
      const error = await rejectionOf(putBatchObject(writer, settings, gone), QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
      expect(error.canRetry).toBe(false);
    } finally {
      spool.close();
      await dir.remove();
    }
  });

  test("a bucket that does not exist cannot be retried; nothing answering can", async () => {
    const missing = await rejectionOf(
      putBatchObject(writer, { ...settings, bucket: "svc-no-such-bucket-qc" }, sealed(1)),
      QueueConsumerError,
    );
    expect(missing.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
    expect(missing.canRetry).toBe(false);

    const listener = hangUpListener();
    const dead = writerS3Client({
      endpoint: listener.url,
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      forcePathStyle: true,
      payloadSigning: "unsigned",
    });
    try {
      const down = await rejectionOf(putBatchObject(dead, settings, sealed(1)), QueueConsumerError);
      expect(down.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
      expect(down.canRetry).toBe(true);
    } finally {
      dead.destroy();
      listener.stop();
    }
  });

  /** The writer's client on a stand-in S3 at `url`. */
  const standInClient = (url: string) =>
    writerS3Client({
      endpoint: url,
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      forcePathStyle: true,
      payloadSigning: "unsigned",
    });

  // What the SDK's own retry strategy retries (throttling, transient, server errors) is retried; the rest of S3's
  // answers stop the writer. MinIO produces none of these on demand: a stand-in answers them.
  const answers: [status: number, code: string, canRetry: boolean][] = [
    [400, "RequestTimeout", true], // a slow upload: S3 gave up reading the body
    [503, "SlowDown", true],
    [429, "TooManyRequests", true],
    [500, "InternalError", true],
    [501, "NotImplemented", true],
    [403, "AccessDenied", false],
    [400, "InvalidRequest", false],
    [403, "SignatureDoesNotMatch", false], // a wrong secret, not a clock
    [403, "RequestTimeTooSkewed", false], // the answer's Date shows no skew: nothing corrected, nothing to gain
  ];
  for (const [status, code, canRetry] of answers) {
    test(`S3 answering ${status} ${code}: QUEUE_CONSUMER_PUT_FAILED, ${canRetry ? "" : "not "}retriable`, async () => {
      const server = s3ErrorServer({ answer: () => ({ status, code }) });
      const client = standInClient(server.url);
      try {
        const error = await rejectionOf(putBatchObject(client, settings, sealed(1)), QueueConsumerError);
        expect(error.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
        expect((error.cause as S3ServiceException).name).toBe(code);
        expect((error.cause as S3ServiceException).$metadata.httpStatusCode).toBe(status);
        expect(error.canRetry).toBe(canRetry);
      } finally {
        client.destroy();
        server.stop();
      }
    });
  }

  test("a proxy in front of S3 answering 408 with an HTML page: retriable (the SDK's classifiers see an UnknownError)", async () => {
    const server = s3ErrorServer({
      answer: () => ({ status: 408, html: "<html><body>Request Timeout</body></html>" }),
    });
    const client = standInClient(server.url);
    try {
      const error = await rejectionOf(putBatchObject(client, settings, sealed(1)), QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
      expect((error.cause as S3ServiceException).$metadata.httpStatusCode).toBe(408);
      expect(error.canRetry).toBe(true);
    } finally {
      client.destroy();
      server.stop();
    }
  });

  test("403 RequestTimeTooSkewed: the SDK corrects its clock from the answer, the PUT is retriable, and the retry on the same client is accepted", async () => {
    const hour = 60 * 60 * 1000;
    const server = s3ErrorServer({ answer: () => ({ versionId: "v-after-skew" }), clockOffsetMs: hour });
    const client = standInClient(server.url);
    try {
      const skewed = await rejectionOf(putBatchObject(client, settings, sealed(1)), QueueConsumerError);
      expect(skewed.code).toBe("QUEUE_CONSUMER_PUT_FAILED");
      expect((skewed.cause as S3ServiceException).name).toBe("RequestTimeTooSkewed");
      expect(skewed.canRetry).toBe(true);
      const written = await putBatchObject(client, settings, sealed(1));
      expect(written.versionId).toBe("v-after-skew");
      const [first = 0, second = 0] = server.requests;
      expect(server.requests).toHaveLength(2);
      // The retry was signed an hour later than the first attempt: on the stand-in's clock.
      expect(second - first).toBeGreaterThan(hour - 60_000);
    } finally {
      client.destroy();
      server.stop();
    }
  });

  /** The headers of every request `client` sent, as signed (after the signer, before the wire). */
  function sentHeaders(client: S3Client): Record<string, string>[] {
    const sent: Record<string, string>[] = [];
    client.middlewareStack.add(
      (next) => (args) => {
        sent.push({ ...(args.request as { headers: Record<string, string> }).headers });
        return next(args);
      },
      { step: "finalizeRequest", priority: "low", name: "testSentHeaders" },
    );
    return sent;
  }

  for (const signing of ["unsigned", "signed"] as const) {
    test(`payload ${signing}: the PUT is stored, its CRC-32 sent and signed, the body's SHA-256 ${signing === "signed" ? "signed" : "not computed"}`, async () => {
      const client = writerClient(addresses, signing);
      const sent = sentHeaders(client);
      try {
        const batch = sealed(3, 900n);
        const written = await putBatchObject(client, settings, batch);
        const body = await s3.send(new GetObjectCommand({ Bucket: "svc-audit", Key: written.key }));
        expect((await bodyOf(body)).equals(batch.body.contents())).toBe(true);
        const put = sent.at(-1) ?? {};
        const hash =
          signing === "unsigned"
            ? "UNSIGNED-PAYLOAD"
            : createHash("sha256").update(batch.body.contents()).digest("hex");
        expect(put["x-amz-content-sha256"]).toBe(hash);
        expect(put.authorization).toContain("x-amz-checksum-crc32");
        expect(put.authorization).toContain("x-amz-content-sha256");
      } finally {
        client.destroy();
      }
    });
  }

  test("payload unsigned: a body that does not match its CRC-32 is refused by S3 and nothing is stored", async () => {
    const key = `${names.keyPrefix}crc-mismatch.jsonl`;
    const body = Buffer.from('{"id":"x"}\n');
    const error = await rejectionOf(
      writer.send(
        new PutObjectCommand({
          Bucket: "svc-audit",
          Key: key,
          Body: body,
          ContentLength: body.length,
          ChecksumCRC32: crc32Checksum(Bun.hash.crc32(Buffer.from("another body"))),
        }),
      ),
      S3ServiceException,
    );
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(await listVersions(s3, "svc-audit", key)).toEqual([]);
  });
});
