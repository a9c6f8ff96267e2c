import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { backoffMs, ExpiringLru } from "@svc/common";
import { AuditApiError } from "./errors.ts";

/** Bytes `[start, end)` of an object. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface VersionReaderOptions {
  /** Lifetime of a presigned URL, in seconds (default 900). */
  urlSeconds?: number;
  /** How long a signed URL is reused, in ms: at most half its lifetime (default a third of it). */
  reuseMs?: number;
  /** GETs per read when the failure is retriable (network, 408, 429, 5xx); default 3, as the SDK's standard retry. */
  maxAttempts?: number;
  /** The time URLs are signed at (default now; tests sign with a clock that is off). */
  signingDate?: () => Date;
  /** How long one GET (answer and body) may take before it counts as no answer, in ms (default 30 000). */
  timeoutMs?: number;
}

/** Signed URLs kept, least recently used dropped first (about 1 KiB each). */
const URLS_KEPT = 10_000;

/** Why one GET failed: the HTTP status (0: no answer) and S3's error code and message when it sent them. */
interface GetFailure {
  status: number;
  code: string;
  message: string;
  cause?: unknown;
}

/** Whether the same GET may succeed later: no answer, timeout, throttling, server errors (not a 403 or 404). */
function canRetryStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

/** A refusal of the URL's signature that a fresh signature may cure (expired URL or credentials, rotated keys). */
function signatureRefused(failure: GetFailure): boolean {
  return failure.status === 403 || failure.code === "ExpiredToken";
}

/** S3's `<Error><Code>…</Code><Message>…</Message></Error>` of a refused GET. */
async function failureOf(response: Response): Promise<GetFailure> {
  let text = "";
  try {
    text = await response.text();
  } catch {
    // the status alone then
  }
  const tag = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1] ?? "";
  return {
    status: response.status,
    code: tag("Code") || `HTTP${response.status}`,
    message: tag("Message") || response.statusText,
  };
}

/**
 * Reads object versions (or byte ranges of them) with `fetch` on URLs presigned by the AWS SDK's presigner: the
 * SDK's per-request path (middleware stack, endpoint rules, signing, node:http emulation) runs once per object
 * version and URL lifetime instead of once per GET (docs/audit-storage.md, "Pages and exports"). The `Range`
 * header is not signed, so one URL serves every range of its version.
 *
 * Failures are `AUDIT_API_OBJECT_READ_FAILED` (subject: the key), `canRetry` for no answer (none within
 * `timeoutMs` included), 408, 429 and 5xx, which are also retried here (`maxAttempts` GETs, with backoff) as the
 * SDK's client retried them; a 404 is neither. A 403 (or `ExpiredToken`) on a URL drops it and signs again once: a
 * URL that expired, or was signed with credentials since rotated; a second refusal is reported with S3's code
 * (`SignatureDoesNotMatch`, `AccessDenied: Request has expired`, …).
 */
export class VersionReader {
  private readonly urls: ExpiringLru<Promise<string>>;
  private readonly urlSeconds: number;
  private readonly maxAttempts: number;
  private readonly signingDate: (() => Date) | undefined;
  private readonly timeoutMs: number;
  private signCount = 0;

  constructor(
    private readonly s3: S3Client,
    options: VersionReaderOptions = {},
  ) {
    this.urlSeconds = options.urlSeconds ?? 900;
    const reuseMs = options.reuseMs ?? (this.urlSeconds * 1000) / 3;
    if (!(reuseMs > 0 && reuseMs <= (this.urlSeconds * 1000) / 2)) {
      throw new RangeError("VersionReader: reuseMs must be > 0 and at most half the URL's lifetime");
    }
    this.urls = new ExpiringLru({ maxEntries: URLS_KEPT, ttlMs: reuseMs });
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.signingDate = options.signingDate;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** URLs signed so far (one per version and reuse period, plus the re-signings after a refusal). */
  get signatures(): number {
    return this.signCount;
  }

  /** The URL of a version, signed once and reused (concurrent reads of one version share the signing). */
  private urlOf(bucket: string, key: string, versionId: string): { id: string; url: Promise<string> } {
    const id = `${bucket}\u0000${key}\u0000${versionId}`;
    let url = this.urls.get(id);
    if (!url) {
      this.signCount++;
      const signed = getSignedUrl(this.s3, new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }), {
        expiresIn: this.urlSeconds,
        signingDate: this.signingDate?.(),
      });
      url = signed;
      signed.catch(() => this.urls.delete(id, signed));
      this.urls.set(id, signed);
    }
    return { id, url };
  }

  /**
   * One GET; the body read in one go (a ranged read answered whole is cut to the range). A server that accepts and
   * never answers (or stalls in the body) is cut after `timeoutMs`: no answer, retriable.
   */
  private async get(url: string, range: ByteRange | undefined): Promise<Uint8Array | GetFailure> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const noAnswer = (error: unknown, what: string): GetFailure => ({
      status: 0,
      code: signal.aborted ? "Timeout" : "NetworkError",
      message: signal.aborted
        ? `${what}: no answer within ${this.timeoutMs} ms`
        : `${what}: ${(error as Error).message}`,
      cause: error,
    });
    let response: Response;
    try {
      response = await fetch(url, {
        redirect: "manual",
        signal,
        headers: range ? { range: `bytes=${range.start}-${range.end - 1}` } : undefined,
      });
    } catch (error) {
      return noAnswer(error, "request");
    }
    if (response.status !== 200 && response.status !== 206) return failureOf(response);
    try {
      const body = await response.bytes();
      return range && response.status === 200 ? body.subarray(range.start, range.end) : body;
    } catch (error) {
      return noAnswer(error, "reading the body");
    }
  }

  /**
   * The bytes of `range` of a version (the whole object without a range; a gzip object may come decoded, by
   * `Content-Encoding`); `AUDIT_API_OBJECT_READ_FAILED` when S3 refuses or cannot be reached.
   */
  async read(bucket: string, key: string, versionId: string, range?: ByteRange): Promise<Uint8Array> {
    let resigned = false;
    for (let attempt = 1; ; attempt++) {
      const { id, url } = this.urlOf(bucket, key, versionId);
      const answer = await url.then(
        (signed) => this.get(signed, range),
        (error: unknown): GetFailure => ({
          status: 0,
          code: "SigningFailed",
          message: (error as Error).message,
          cause: error,
        }),
      );
      if (answer instanceof Uint8Array) return answer;
      if (signatureRefused(answer) && !resigned) {
        resigned = true;
        this.urls.delete(id, url);
        attempt--;
        continue;
      }
      const canRetry = canRetryStatus(answer.status);
      if (!canRetry || attempt >= this.maxAttempts) {
        const status = answer.status === 0 ? "no answer" : `HTTP ${answer.status}`;
        const hint = signatureRefused(answer)
          ? " (the presigned URL was refused: check SVC_AUDIT_S3_ACCESS_KEY / SVC_AUDIT_S3_SECRET_KEY and the clock)"
          : "";
        throw new AuditApiError(
          "AUDIT_API_OBJECT_READ_FAILED",
          `${key}: GET version ${versionId}: ${answer.code}: ${answer.message} (${status}` +
            `${attempt > 1 ? `, ${attempt} attempts` : ""})${hint}`,
          { subject: key, canRetry, cause: answer.cause },
        );
      }
      await Bun.sleep(backoffMs(attempt - 1, 1_000));
    }
  }
}
