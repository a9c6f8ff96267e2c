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
 * The bytes of one read: a ranged GET (through `cache` when given), or the whole object decoded for gzip
 * (`version-reader.ts`'s failures; the caller finds its range at `start` then).
 */
async function fetchRange(
  objects: VersionReader,
  read: { bucket: string; key: string; versionId: string; start: number; end: number },
  cache?: BlockCache,
): Promise<Uint8Array> {
  if (!read.key.endsWith(".gz")) {
    return (cache ?? objects).read(read.bucket, read.key, read.versionId, { start: read.start, end: read.end });
  }
  const body = await objects.read(read.bucket, read.key, read.versionId);
  // Stored with Content-Encoding gzip: fetch may or may not have decoded it already.
  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  return gzipped ? Bun.gunzipSync(body as Uint8Array<ArrayBuffer>) : body;
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
  cache?: BlockCache,
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
    cache,
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
  cache?: BlockCache,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const read = reads[next++] as PlannedRead;
      const body = await fetchRange(objects, read, cache);
      take(read, body, read.key.endsWith(".gz") ? 0 : read.start);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, reads.length) }, worker));
}
