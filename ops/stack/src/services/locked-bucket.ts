import {
  CreateBucketCommand,
  GetObjectLockConfigurationCommand,
  HeadBucketCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectLockConfigurationCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { StackError } from "../errors.ts";

/** The part of `S3Client` these functions use (a test can hand in a server that fails the way MinIO can). */
export type S3Sender = Pick<S3Client, "send">;

export interface BucketWaitOptions {
  /** How long a bucket's state may stay unknown (MinIO answers 5xx for a moment after its ready probe). */
  timeoutMs: number;
  intervalMs: number;
}

const DEFAULT_WAIT: BucketWaitOptions = { timeoutMs: 30_000, intervalMs: 250 };

/**
 * The local stack's buckets expire what they hold a day after its retention: MinIO's lifecycle removes no version
 * before its retain-until date, and nothing else ever can under COMPLIANCE. Without it the benches' objects (about
 * 2.5 GB per `bench:pipeline` run) stayed for good and filled the disk (60 GB on 2026-11-26). Production buckets and
 * their lifecycle are the operator's (docs/audit-storage.md).
 */
export function stackLifecycle(bucket: string, retentionDays: number) {
  return {
    Bucket: bucket,
    LifecycleConfiguration: {
      Rules: [
        {
          ID: "svc-stack-expire-after-retention",
          Status: "Enabled" as const,
          Filter: { Prefix: "" },
          Expiration: { Days: retentionDays + 1 },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        },
      ],
    },
  };
}

const statusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const nameOf = (error: unknown): string => (error as { name?: string }).name ?? "";

/**
 * Whether `bucket` exists: HeadBucket's 200 or 404. Any other answer (a 503 while MinIO is still initialising, a
 * reset connection) says nothing about the bucket and is asked again until `timeoutMs`. Until 2026-11-26 every
 * failure meant "absent": a 5xx right after the start sent a CreateBucket for a bucket that existed, whose
 * BucketAlreadyOwnedByYou then failed `ops/dev up`.
 */
export async function bucketExists(s3: S3Sender, bucket: string, wait = DEFAULT_WAIT): Promise<boolean> {
  const deadline = performance.now() + wait.timeoutMs;
  for (;;) {
    try {
      await s3.send(new HeadBucketCommand({ Bucket: bucket }));
      return true;
    } catch (error) {
      if (statusOf(error) === 404 || nameOf(error) === "NotFound" || nameOf(error) === "NoSuchBucket") return false;
      if (performance.now() >= deadline) {
        throw new StackError(
          "STACK_START_FAILED",
          `bucket ${bucket}: no answer to HeadBucket within ${wait.timeoutMs} ms (last: ${nameOf(error) || "error"}` +
            ` ${statusOf(error) ?? ""} ${(error as Error).message})`,
          "minio",
          { cause: error },
        );
      }
      await Bun.sleep(wait.intervalMs);
    }
  }
}

/**
 * Creates the bucket with Object Lock on (it can only be turned on at creation) and COMPLIANCE for `days` by default,
 * and sets the stack's lifecycle (`stackLifecycle`). A bucket another `up` created meanwhile
 * (BucketAlreadyOwnedByYou) is kept; one without Object Lock is refused.
 */
export async function ensureLockedBucket(
  s3: S3Sender,
  bucket: string,
  days: number,
  wait = DEFAULT_WAIT,
): Promise<void> {
  if (!(await bucketExists(s3, bucket, wait))) {
    await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true })).catch((error) => {
      if (nameOf(error) !== "BucketAlreadyOwnedByYou") throw error;
    });
  }
  const current = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket })).catch(() => undefined);
  if (current?.ObjectLockConfiguration?.ObjectLockEnabled !== "Enabled") {
    throw new StackError(
      "STACK_START_FAILED",
      `bucket ${bucket} exists without Object Lock; Object Lock can only be enabled when a bucket is created`,
      "minio",
    );
  }
  await s3.send(new PutBucketLifecycleConfigurationCommand(stackLifecycle(bucket, days)));
  const rule = current.ObjectLockConfiguration.Rule?.DefaultRetention;
  if (rule?.Mode === "COMPLIANCE" && rule.Days === days) return;
  await s3.send(
    new PutObjectLockConfigurationCommand({
      Bucket: bucket,
      ObjectLockConfiguration: {
        ObjectLockEnabled: "Enabled",
        Rule: { DefaultRetention: { Mode: "COMPLIANCE", Days: days } },
      },
    }),
  );
}
