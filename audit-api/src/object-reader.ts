import { decodeGzipBody } from "@svc/common";
import type { BlockCache } from "./block-cache.ts";
import { AuditApiError } from "./errors.ts";
import type { EventLocation } from "./index-reader.ts";
import { type PlannedRead, planReads, type VersionSpan } from "./read-plan.ts";
import type { VersionReader } from "./version-reader.ts";

/** An event's line as a span of its object version. */
function spanOfLocation(location: EventLocation): VersionSpan {
  return {
    bucket: location.bucket,
    key: location.key,
    versionId: location.versionId,
    start: location.byteStart,
    end: location.byteStart + location.byteLength,
  };
}

/** GETs running at once for one page or export step. */
const CONCURRENCY = 8;

function shortRead(subject: string, id: string): AuditApiError {
  return new AuditApiError("AUDIT_API_OBJECT_READ_FAILED", `${subject}: short read for event ${id}`, { subject });
}

/**
 * Where reads may be answered from memory: `blocks` for plain ranges (a list's pages), `decoded` for gzip objects
 * (read whole; `blocks` when not given). Neither: every read is a GET.
 */
export interface ReadCaches {
  blocks?: BlockCache;
  decoded?: BlockCache;
}

/**
 * The bytes of one read: a ranged GET, or the whole object decoded for gzip, whose range the caller finds at `start`
 * then (`version-reader.ts`'s failures).
 */
async function fetchRange(
  objects: VersionReader,
  read: { bucket: string; key: string; versionId: string; start: number; end: number },
  caches: ReadCaches,
): Promise<Uint8Array> {
  if (!read.key.endsWith(".gz")) {
    const source = caches.blocks ?? objects;
    return source.read(read.bucket, read.key, read.versionId, { start: read.start, end: read.end });
  }
  const decoded = caches.decoded ?? caches.blocks;
  if (decoded) return decoded.whole(read.bucket, read.key, read.versionId);
  return decodeGzipBody(await objects.read(read.bucket, read.key, read.versionId));
}

/**
 * The stored lines of `locations`, in their order, each exactly as the writer stored it (no newline); a short read
 * is `AUDIT_API_OBJECT_READ_FAILED`. Whether a line holds the id the index names is the caller's check
 * (audit-queries.ts, `checkLine`).
 */
export async function readLines(
  objects: VersionReader,
  locations: readonly EventLocation[],
  mergeBytes: number,
  caches: ReadCaches = {},
): Promise<Uint8Array[]> {
  const lines: Uint8Array[] = new Array(locations.length);
  await fetchReads(
    objects,
    planReads(locations, spanOfLocation, mergeBytes),
    (read, body, base) => {
      for (const index of read.indices) {
        const location = locations[index] as EventLocation;
        const from = location.byteStart - base;
        const line = body.subarray(from, from + location.byteLength);
        if (line.length !== location.byteLength) throw shortRead(read.key, location.id);
        lines[index] = line;
      }
    },
    caches,
  );
  return lines;
}

/**
 * Fetches `reads`, `CONCURRENCY` at a time, and hands each one's bytes to `take` with `base`, the object offset of
 * the bytes' first byte (0 for a gzip object, read whole): the GET loop of pages (`readLines`) and export runs
 * (`readRuns`). The first failure rejects.
 */
export async function fetchReads(
  objects: VersionReader,
  reads: readonly PlannedRead[],
  take: (read: PlannedRead, body: Uint8Array, base: number) => void,
  caches: ReadCaches = {},
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const read = reads[next++] as PlannedRead;
      const body = await fetchRange(objects, read, caches);
      take(read, body, read.key.endsWith(".gz") ? 0 : read.start);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, reads.length) }, worker));
}
