import { S3Client } from "@aws-sdk/client-s3";
import { stackEnv } from "@svc/testkit";

/**
 * A proxy to MinIO that keeps the signed Host and counts requests; `answer` may answer a request itself (the
 * failures MinIO cannot produce on demand), or return `"strip-range"` to forward it without its Range header.
 */
export function minioProxy(answer: (n: number) => Response | "strip-range" | undefined) {
  let requests = 0;
  const target = stackEnv().s3.endpoint;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      requests++;
      const own = answer(requests);
      if (own instanceof Response) return own;
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      if (own === "strip-range") headers.delete("range");
      // Passed on as stored: a gzip object's bytes stay encoded, as its Content-Encoding header says.
      const forwarded = await fetch(`${target}${url.pathname}${url.search}`, {
        headers,
        redirect: "manual",
        decompress: false,
      });
      return new Response(await forwarded.arrayBuffer(), { status: forwarded.status, headers: forwarded.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    get requests() {
      return requests;
    },
    stop: () => server.stop(true),
  };
}

/** An S3 client of the stack's credentials (or another secret) that talks to `endpoint` (a proxy, a listener). */
export function s3At(endpoint: string, secretAccessKey = stackEnv().s3.secretAccessKey): S3Client {
  const { s3: stack } = stackEnv();
  return new S3Client({
    endpoint,
    region: stack.region,
    credentials: { accessKeyId: stack.accessKeyId, secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}
