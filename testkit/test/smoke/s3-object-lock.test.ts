import { expect, test } from "bun:test";
import {
  DeleteObjectCommand,
  GetBucketLifecycleConfigurationCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { bucketPrefix, stackS3Settings } from "@svc/testkit";

const s3 = new S3Client(stackS3Settings());

test("the stack's audit buckets exist with Object Lock and COMPLIANCE default retention", async () => {
  for (const bucket of ["svc-audit", "svc-kms-audit"]) {
    const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
    expect(lock.ObjectLockConfiguration?.ObjectLockEnabled).toBe("Enabled");
    expect(lock.ObjectLockConfiguration?.Rule?.DefaultRetention?.Mode).toBe("COMPLIANCE");
  }
});

test("the stack's buckets expire objects a day after their retention (the benches' objects do not stay for good)", async () => {
  for (const bucket of ["svc-audit", "svc-kms-audit"]) {
    const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
    const days = lock.ObjectLockConfiguration?.Rule?.DefaultRetention?.Days ?? 0;
    expect(days).toBeGreaterThan(0);
    const lifecycle = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
    const rule = lifecycle.Rules?.find((r) => r.ID === "svc-stack-expire-after-retention");
    expect(rule?.Status).toBe("Enabled");
    expect(rule?.Expiration?.Days).toBe(days + 1);
    expect(rule?.NoncurrentVersionExpiration?.NoncurrentDays).toBe(1);
  }
});

test("a COMPLIANCE object keeps its retain-until date and its version cannot be deleted", async () => {
  const key = `${bucketPrefix("smoke")}record.jsonl`;
  // Whole seconds: S3 stores retain-until dates at second precision.
  const retainUntil = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60 * 60 * 1000);
  const put = await s3.send(
    new PutObjectCommand({
      Bucket: "svc-audit",
      Key: key,
      Body: '{"action":"smoke"}\n',
      ContentType: "application/x-ndjson",
      ChecksumAlgorithm: "SHA256",
      ObjectLockMode: "COMPLIANCE",
      ObjectLockRetainUntilDate: retainUntil,
    }),
  );
  expect(put.VersionId).toBeString();

  const retention = await s3.send(
    new GetObjectRetentionCommand({ Bucket: "svc-audit", Key: key, VersionId: put.VersionId }),
  );
  expect(retention.Retention?.Mode).toBe("COMPLIANCE");
  expect(retention.Retention?.RetainUntilDate?.getTime()).toBe(retainUntil.getTime());

  const refused = await s3
    .send(new DeleteObjectCommand({ Bucket: "svc-audit", Key: key, VersionId: put.VersionId }))
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(refused).toBeInstanceOf(S3ServiceException);
  // AWS answers 403 AccessDenied; MinIO answers 400 InvalidRequest ("Object is WORM protected").
  expect([400, 403]).toContain((refused as S3ServiceException).$metadata.httpStatusCode ?? 0);
  const still = await s3.send(new HeadObjectCommand({ Bucket: "svc-audit", Key: key, VersionId: put.VersionId }));
  expect(still.VersionId).toBe(put.VersionId);
  expect(still.ObjectLockMode).toBe("COMPLIANCE");
});
