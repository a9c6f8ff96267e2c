/**
 * What the stand-in answers a request: an S3 error (status and code), a page of something in front of S3 (a proxy's
 * status and HTML), or a stored version.
 */
export type S3Answer = { status: number; code: string } | { status: number; html: string } | { versionId: string };

/** The skew S3 accepts between a request's `x-amz-date` and its own clock (15 min). */
const ALLOWED_SKEW_MS = 15 * 60 * 1000;

/** `x-amz-date` (`20261123T083000Z`) as ms since the epoch; NaN when it is not one. */
function amzDateMs(value: string | null): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? "");
  if (!match) return Number.NaN;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

function errorBody(code: string, serverTime: Date): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>${code}</Code><Message>${code} (stand-in)</Message><ServerTime>${serverTime.toISOString()}</ServerTime><RequestId>stand-in</RequestId><HostId>stand-in</HostId></Error>`;
}

/**
 * A loopback HTTP server (port 0) standing in for S3 where MinIO cannot produce the failure: it answers every request
 * with `answer()`, dated by its own clock (the machine's plus `clockOffsetMs`), and, as S3 does, refuses with 403
 * `RequestTimeTooSkewed` a request whose `x-amz-date` is more than 15 min off that clock. `requests` holds each
 * request's `x-amz-date` as ms.
 */
export function s3ErrorServer(options: { answer: () => S3Answer; clockOffsetMs?: number }): {
  url: string;
  requests: number[];
  stop(): void;
} {
  const requests: number[] = [];
  const offset = options.clockOffsetMs ?? 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      const now = new Date(Date.now() + offset);
      const signedAt = amzDateMs(request.headers.get("x-amz-date"));
      requests.push(signedAt);
      const headers = { date: now.toUTCString(), "x-amz-request-id": "stand-in" };
      const answer: S3Answer =
        Math.abs(signedAt - now.getTime()) > ALLOWED_SKEW_MS
          ? { status: 403, code: "RequestTimeTooSkewed" }
          : options.answer();
      if ("versionId" in answer) {
        return new Response(null, { status: 200, headers: { ...headers, "x-amz-version-id": answer.versionId } });
      }
      if ("html" in answer) {
        return new Response(answer.html, {
          status: answer.status,
          headers: { ...headers, "content-type": "text/html" },
        });
      }
      return new Response(errorBody(answer.code, now), {
        status: answer.status,
        headers: { ...headers, "content-type": "application/xml" },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => void server.stop(true) };
}
