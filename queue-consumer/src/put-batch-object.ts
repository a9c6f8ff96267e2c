import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { PutObjectCommand, type S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";
import type { BatchBody } from "./batch-body.ts";
import { QueueConsumerError } from "./errors.ts";
import { objectKey } from "./object-key.ts";
import type { ClosedBatch } from "./partition-batch.ts";

const gzipAsync = promisify(gzip);
const DAY_MS = 24 * 60 * 60 * 1000;

export interface PutSettings {
  bucket: string;
  keyPrefix: string;
  retentionDays: number;
  compression: "none" | "gzip";
  /**
   * `signed`: the signature covers the body's SHA-256, so the body is read into the heap for the SDK to hash (a
   * spool file's `Blob` would be sent as `UNSIGNED-PAYLOAD`). Default `unsigned` (the writer's client says so).
   */
  payloadSigning?: "signed" | "unsigned";
}

export interface WrittenObject {
  bucket: string;
  key: string;
  versionId: string;
  /** Bytes stored (compressed when gzip). */
  bytes: number;
  retainUntil: Date;
  /** When S3 acknowledged the PUT: the moment the object is durable (the index's `objects.written_at`). */
  writtenAt: Date;
}

/**
 * Whether S3 may accept the same PUT later, as the SDK's own retry strategy decides it (`@smithy/core/retry`, the
 * former `@smithy/service-error-classification`; the writer's client makes one attempt, `s3-client.ts`, so its
 * loop does the retrying): throttling (429, `SlowDown`), transient (500/502/503/504, S3's 400 `RequestTimeout` of
 * a slow upload, a clock skew the SDK corrected) and other server errors (5xx). Anything else S3 answered
 * (`AccessDenied`, `InvalidRequest`, `NoSuchBucket`, `SignatureDoesNotMatch`: a wrong secret) stops the writer.
 * No answer at all (connection refused or reset: Bun's `fetch` errors carry none of the Node codes the SDK knows)
 * can be retried.
 *
 * Clock skew (403 `RequestTimeTooSkewed`, past S3's 15 min): with `maxAttempts: 1` the SDK still runs its signer's
 * error handler (`@aws-sdk/core`, `AwsSdkSigV4Signer.errorHandler`, from `httpSigningMiddleware`, not the retry
 * middleware): it sets the client's `systemClockOffset` from the answer's `ServerTime` or `Date` and flags the error
 * `$metadata.clockSkewCorrected` when the offset moved by 4 min or more, which `isTransientError` counts. The next
 * attempt on the same client signs with the corrected time and succeeds (put-batch-object.test.ts). A skew that
 * persists after the correction is not flagged again, and stops the writer.
 */
function canRetryS3(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return true;
  // No answer S3 itself gave (no status), or a 408 from whatever stands in front of it (a proxy's HTML page is an
  // `UnknownError` the classifiers do not count): retried, as before the classifiers.
  const status = error.$metadata?.httpStatusCode;
  if (status === undefined || status === 408) return true;
  // The classifiers' `SdkError` types `cause` as an `Error`, ES2022's `Error` as `unknown`; they only read it.
  const answer = error as Parameters<typeof isTransientError>[0];
  return isThrottlingError(answer) || isTransientError(answer) || isServerError(answer);
}

/**
 * `x-amz-checksum-crc32` of a body: its CRC-32 (IEEE, unsigned), big-endian, base64. Computed natively
 * (`Bun.hash.crc32`, GB/s; a spool file's as it is written) and handed to the SDK, which then sends it as is; asked
 * for CRC32C instead, the SDK computed it in JavaScript, at about 5 % of the writer's CPU.
 */
export function crc32Checksum(crc32: number): string {
  const digest = Buffer.alloc(4);
  digest.writeUInt32BE(crc32 >>> 0);
  return digest.toString("base64");
}

/** What the PUT sends, with its length and checksum. */
interface EncodedBody {
  payload: Buffer | Blob;
  length: number;
  crc32: number;
}

/**
 * The object's body as stored: the JSONL (the spool file itself, unless the signature needs the bytes), or its gzip
 * (level 1) when compression is on.
 */
async function encodeBody(body: BatchBody, settings: PutSettings): Promise<EncodedBody> {
  if (settings.compression === "gzip") {
    const gzipped = await gzipAsync(body.contents(), { level: 1 });
    return { payload: gzipped, length: gzipped.length, crc32: Bun.hash.crc32(gzipped) };
  }
  const payload = settings.payloadSigning === "signed" ? body.contents() : body.payload();
  return { payload, length: body.length, crc32: body.crc32() };
}

/** How one PUT may be ended early: the writer's signal (its partition revoked) and a time limit. */
export interface PutLimits {
  /** Aborts the PUT (the batch is no longer this replica's to write). */
  signal?: AbortSignal;
  /** The PUT fails, retriably, when S3 has not answered whole within this many ms. */
  timeoutMs?: number;
}

/**
 * PUTs one batch object under Object Lock COMPLIANCE (docs/audit-storage.md, "PUT"): retain-until = now +
 * retention days, `x-amz-checksum-crc32` (computed here, `crc32Checksum`), and the batch's offsets and record
 * count as user metadata: nothing that needs the records read, so a closed batch is PUT at once (its index rows
 * are encoded while the PUT is in flight: `encodeWhilePutting`). Throws `QUEUE_CONSUMER_PUT_FAILED`, or
 * `QUEUE_CONSUMER_PUT_TIMEOUT` (retriable) when S3 gave no whole answer within `limits.timeoutMs` of the request (a server that accepted the
 * connection and went silent): the PUT is aborted, so the writer's retry loop, not a hung socket, decides what
 * happens to the batch.
 */
export async function putBatchObject(
  s3: S3Client,
  settings: PutSettings,
  batch: ClosedBatch,
  now: Date = new Date(),
  limits: PutLimits = {},
): Promise<WrittenObject> {
  const gzipped = settings.compression === "gzip";
  const key = objectKey({
    prefix: settings.keyPrefix,
    topic: batch.topic,
    partition: batch.partition,
    firstOffset: batch.firstOffset,
    firstTimestampMs: batch.firstTimestampMs,
    gzip: gzipped,
  });
  const retainUntil = new Date(now.getTime() + settings.retentionDays * DAY_MS);
  let timeout: AbortSignal | undefined;
  try {
    const body = await encodeBody(batch.body, settings);
    // The limit is the request's own: it starts once the body is ready (gzip of a large batch is not S3's time).
    timeout = limits.timeoutMs === undefined ? undefined : AbortSignal.timeout(limits.timeoutMs);
    const signals = [limits.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const abortSignal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
    const metadata: Record<string, string> = {
      "first-offset": batch.firstOffset.toString(),
      "last-offset": batch.lastOffset.toString(),
      records: String(batch.records),
    };
    const answer = await s3.send(
      new PutObjectCommand({
        Bucket: settings.bucket,
        Key: key,
        Body: body.payload,
        ContentLength: body.length,
        ContentType: "application/x-ndjson",
        ContentEncoding: gzipped ? "gzip" : undefined,
        ChecksumAlgorithm: "CRC32",
        ChecksumCRC32: crc32Checksum(body.crc32),
        ObjectLockMode: "COMPLIANCE",
        ObjectLockRetainUntilDate: retainUntil,
        Metadata: metadata,
      }),
      { abortSignal },
    );
    if (!answer.VersionId) {
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_PUT_FAILED",
        `PUT ${settings.bucket}/${key}: no version id (is the bucket versioned with Object Lock?)`,
        { subject: key },
      );
    }
    return {
      bucket: settings.bucket,
      key,
      versionId: answer.VersionId,
      bytes: body.length,
      retainUntil,
      writtenAt: new Date(),
    };
  } catch (error) {
    if (error instanceof QueueConsumerError) throw error;
    // Before the timeout's check: a PUT of a vanished spool file stops the writer instead of being retried.
    if (batch.body.lost()) {
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_SPOOL_FAILED",
        `PUT ${settings.bucket}/${key}: its spool file is gone`,
        {
          subject: key,
          cause: error,
        },
      );
    }
    const timedOut = timeout?.aborted === true && limits.signal?.aborted !== true;
    if (timedOut) {
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_PUT_TIMEOUT",
        `PUT ${settings.bucket}/${key}: no answer within ${limits.timeoutMs} ms`,
        { subject: key, canRetry: true, cause: error },
      );
    }
    const message = error instanceof Error ? error.message : String(error);
    throw new QueueConsumerError("QUEUE_CONSUMER_PUT_FAILED", `PUT ${settings.bucket}/${key}: ${message}`, {
      subject: key,
      canRetry: canRetryS3(error),
      cause: error,
    });
  }
}
