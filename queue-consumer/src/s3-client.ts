import { S3Client } from "@aws-sdk/client-s3";
import { FetchHttpHandler } from "@smithy/fetch-http-handler";
import type { S3Settings } from "./config.ts";

/**
 * The writer's S3 client. Requests go through `fetch` (Bun's native client) instead of the SDK's default
 * `node:http` handler: a 6.7 MB batch PUT to the stack's MinIO costs 12 ms of CPU instead of 17, and is acknowledged
 * ~4 ms sooner (queue-consumer/README.md, "Throughput"). No SDK retries: the writer's own loop retries with backoff,
 * nothing committed meanwhile, and counts each retry; the SDK's would hide the failures. For PUTs: `fetch` decodes
 * a `Content-Encoding: gzip` body on a GET, which the SDK's response checksum then refuses (the writer never reads).
 */
export function writerS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    credentials: settings.credentials,
    forcePathStyle: settings.forcePathStyle,
    maxAttempts: 1,
    requestHandler: new FetchHttpHandler(),
  });
}
