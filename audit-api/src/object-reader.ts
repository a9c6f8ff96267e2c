import { GetObjectCommand, type S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { AuditApiError } from "./errors.ts";
import type { EventLocation } from "./index-reader.ts";

/** One GET: a byte range `[start, end)` of one object version and the events whose lines lie in it. */
interface RangeRead {
  bucket: string;
  key: string;
  versionId: string;
  start: number;
  end: number;
  events: { index: number; location: EventLocation }[];
}

/** GETs running at once for one page. */
const CONCURRENCY = 8;

/** Whether the same GET may succeed later: throttling, server errors, network failures (not a 403 or 404). */
function canRetryGet(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return true;
  const status = error.$metadata.httpStatusCode ?? 0;
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

function readFailed(subject: string, message: string, cause?: unknown): AuditApiError {
  return new AuditApiError("AUDIT_API_OBJECT_READ_FAILED", `${subject}: ${message}`, {
    subject,
    canRetry: cause !== undefined && canRetryGet(cause),
    cause,
  });
}

/**
 * Groups the locations by object version and merges ranges closer than `mergeBytes` into one GET (docs/audit-
 * storage.md, "Pages and exports"). Gzip objects (`.gz`) are read whole, once each.
 */
export function planReads(locations: readonly EventLocation[], mergeBytes: number): RangeRead[] {
  const byObject = new Map<string, { index: number; location: EventLocation }[]>();
  let previous: EventLocation | undefined;
  let list: { index: number; location: EventLocation }[] = [];
  locations.forEach((location, index) => {
    // Pages run through one object after another: the key is built only when the object changes.
    const same =
      previous !== undefined &&
      previous.key === location.key &&
      previous.versionId === location.versionId &&
      previous.bucket === location.bucket;
    if (!same) {
      const id = `${location.bucket}\u0000${location.key}\u0000${location.versionId}`;
      list = byObject.get(id) ?? [];
      byObject.set(id, list);
    }
    list.push({ index, location });
    previous = location;
  });
  const reads: RangeRead[] = [];
  for (const list of byObject.values()) {
    list.sort((a, b) => a.location.byteStart - b.location.byteStart);
    const first = list[0]?.location;
    if (!first) continue;
    const whole = first.key.endsWith(".gz");
    let current: RangeRead | undefined;
    for (const entry of list) {
      const { byteStart, byteLength } = entry.location;
      if (current && (whole || byteStart - current.end <= mergeBytes)) {
        current.end = Math.max(current.end, byteStart + byteLength);
        current.events.push(entry);
        continue;
      }
      current = {
        bucket: first.bucket,
        key: first.key,
        versionId: first.versionId,
        start: byteStart,
        end: byteStart + byteLength,
        events: [entry],
      };
      reads.push(current);
    }
  }
  return reads;
}

async function fetchRange(s3: S3Client, read: RangeRead): Promise<Uint8Array> {
  const whole = read.key.endsWith(".gz");
  let body: Uint8Array;
  try {
    const answer = await s3.send(
      new GetObjectCommand({
        Bucket: read.bucket,
        Key: read.key,
        VersionId: read.versionId,
        Range: whole ? undefined : `bytes=${read.start}-${read.end - 1}`,
      }),
    );
    if (!answer.Body) throw new Error("empty answer");
    body = await answer.Body.transformToByteArray();
  } catch (error) {
    throw readFailed(read.key, `GET version ${read.versionId}: ${(error as Error).message}`, error);
  }
  if (!whole) return body;
  // Stored with Content-Encoding gzip: the client may or may not have decoded it already.
  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  return gzipped ? Bun.gunzipSync(body as Uint8Array<ArrayBuffer>) : body;
}

/**
 * The stored lines of `locations`, in their order, each exactly as the writer stored it (no newline); a short read
 * is `AUDIT_API_OBJECT_READ_FAILED`. Whether a line holds the id the index names is the caller's check
 * (audit-queries.ts, `checkLine`).
 */
export async function readLines(
  s3: S3Client,
  locations: readonly EventLocation[],
  mergeBytes: number,
): Promise<Uint8Array[]> {
  const lines: Uint8Array[] = new Array(locations.length);
  const reads = planReads(locations, mergeBytes);
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const read = reads[next++] as RangeRead;
      const body = await fetchRange(s3, read);
      const base = read.key.endsWith(".gz") ? 0 : read.start;
      for (const { index, location } of read.events) {
        const from = location.byteStart - base;
        const line = body.subarray(from, from + location.byteLength);
        if (line.length !== location.byteLength) throw readFailed(read.key, `short read for event ${location.id}`);
        lines[index] = line;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, reads.length) }, worker));
  return lines;
}
