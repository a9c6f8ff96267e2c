import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
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
  const client = fetchS3Client(settings, { maxAttempts: 1 });
  if (settings.payloadSigning === "unsigned") sendUnsignedPayload(client);
  return client;
}

/** An S3 client on `settings` whose requests go through `fetch`, with `config` on top. */
function fetchS3Client(settings: S3Settings, config: S3ClientConfig): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    credentials: settings.credentials,
    forcePathStyle: settings.forcePathStyle,
    requestHandler: new FetchHttpHandler(),
    ...config,
  });
}

/**
 * Every request says `UNSIGNED-PAYLOAD` instead of its body's SHA-256, which the signer then takes as given. A 10 MB
 * batch PUT to the stack's MinIO: ~12 instead of 17–19 ms of the writer's CPU, acknowledged in 33–35 instead of
 * 43–46 ms (MinIO hashes no more either; queue-consumer/README.md, "Throughput"). The body is still checked: its
 * CRC-32 header is signed and S3 refuses a body that does not match it.
 */
function sendUnsignedPayload(client: S3Client): void {
  client.middlewareStack.add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
      return next(args);
    },
    { step: "build", name: "svcUnsignedPayload" },
  );
}

/**
 * The client `rebuild-index` reads objects with: the writer's, but with the SDK's own retries (a read can be sent
 * again), and a GET's checksum checked only when asked (`ChecksumMode`): `fetch` decodes a gzip object's body, so the
 * stored bytes' CRC-32 cannot be checked on it (gunzip's own CRC-32 covers those).
 */
export function readerS3Client(settings: S3Settings): S3Client {
  return fetchS3Client(settings, { maxAttempts: 3, responseChecksumValidation: "WHEN_REQUIRED" });
}
