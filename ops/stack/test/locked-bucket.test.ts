import { afterAll, expect, test } from "bun:test";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  GetBucketLifecycleConfigurationCommand,
  GetObjectLockConfigurationCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { randomName, rejectionOf, stackS3Settings } from "@svc/testkit";
import { StackError } from "../src/errors.ts";
import { bucketExists, ensureLockedBucket, type S3Sender } from "../src/services/locked-bucket.ts";

const s3 = new S3Client(stackS3Settings());
const made: string[] = [];
afterAll(async () => {
  // Empty buckets go, Object Lock or not.
  await Promise.all(made.map((bucket) => s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined)));
  s3.destroy();
});

const quick = { timeoutMs: 400, intervalMs: 20 };
const bucketName = () => {
  const bucket = randomName("lock").toLowerCase().replaceAll("_", "-");
  made.push(bucket);
  return bucket;
};
const unavailable = () =>
  new S3ServiceException({
    name: "ServiceUnavailable",
    $fault: "server",
    $metadata: { httpStatusCode: 503 },
    message: "Server not initialized yet, please try again.",
  });

/** The real MinIO behind `s3`, but HeadBucket answers 503 `failures` times first, as MinIO does while it starts. */
function startingServer(failures: number): S3Sender & { heads: number } {
  const server = {
    heads: 0,
    send: ((command: { constructor: { name: string } }) => {
      if (command.constructor.name === "HeadBucketCommand" && server.heads++ < failures) {
        return Promise.reject(unavailable());
      }
      return s3.send(command as never);
    }) as S3Client["send"],
  };
  return server;
}

test("a new bucket is created with Object Lock, COMPLIANCE for the days given and the stack's lifecycle", async () => {
  const bucket = bucketName();
  expect(await bucketExists(s3, bucket, quick)).toBe(false);
  await ensureLockedBucket(s3, bucket, 3, quick);
  expect(await bucketExists(s3, bucket, quick)).toBe(true);
  const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
  expect(lock.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: "COMPLIANCE", Days: 3 });
  const lifecycle = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
  expect(lifecycle.Rules?.[0]?.Expiration?.Days).toBe(4);
  // Again, with other days: the bucket is kept and its default retention follows.
  await ensureLockedBucket(s3, bucket, 5, quick);
  const again = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
  expect(again.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: "COMPLIANCE", Days: 5 });
});

test("an existing bucket whose HeadBucket answers 503 at first is kept, not created again", async () => {
  const bucket = bucketName();
  await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
  const server = startingServer(3);
  await ensureLockedBucket(server, bucket, 2, quick);
  expect(server.heads).toBe(4);
  const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
  expect(lock.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: "COMPLIANCE", Days: 2 });
});

test("a bucket whose state stays unknown fails the start with STACK_START_FAILED, naming the bucket and the answer", async () => {
  const bucket = bucketName();
  const error = await rejectionOf(bucketExists(startingServer(Number.POSITIVE_INFINITY), bucket, quick), StackError);
  expect(error.code).toBe("STACK_START_FAILED");
  expect(error.message).toContain(bucket);
  expect(error.message).toContain("503");
});

test("a bucket another `up` created meanwhile (BucketAlreadyOwnedByYou) is kept", async () => {
  const bucket = bucketName();
  await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
  // HeadBucket says absent once (the other `up` had not created it yet), so CreateBucket meets the existing bucket.
  const late: S3Sender = {
    send: ((command: { constructor: { name: string } }) =>
      command.constructor.name === "HeadBucketCommand"
        ? Promise.reject(
            new S3ServiceException({ name: "NotFound", $fault: "client", $metadata: { httpStatusCode: 404 } }),
          )
        : s3.send(command as never)) as S3Client["send"],
  };
  await ensureLockedBucket(late, bucket, 1, quick);
  const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
  expect(lock.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: "COMPLIANCE", Days: 1 });
});

test("a bucket without Object Lock is refused with STACK_START_FAILED", async () => {
  const bucket = bucketName();
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const error = await rejectionOf(ensureLockedBucket(s3, bucket, 1, quick), StackError);
  expect(error.code).toBe("STACK_START_FAILED");
  expect(error.message).toContain("without Object Lock");
});
