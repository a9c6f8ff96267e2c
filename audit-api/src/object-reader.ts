import type { BlockCache } from "./block-cache.ts";
import { AuditApiError } from "./errors.ts";
import type { EventLocation } from "./index-reader.ts";
import type { VersionReader } from "./version-reader.ts";

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

function shortRead(subject: string, id: string): AuditApiError {
  return new AuditApiError("AUDIT_API_OBJECT_READ_FAILED", `${subject}: short read for event ${id}`, { subject });
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

/**
 * The bytes of one read: a ranged GET (through `cache` when given), or the whole object decoded for gzip
 * (`version-reader.ts`'s failures; the caller finds its range at `start` then).
 */
export async function fetchRange(
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
  const reads = planReads(locations, mergeBytes);
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const read = reads[next++] as RangeRead;
      const body = await fetchRange(objects, read, cache);
      const base = read.key.endsWith(".gz") ? 0 : read.start;
      for (const { index, location } of read.events) {
        const from = location.byteStart - base;
        const line = body.subarray(from, from + location.byteLength);
        if (line.length !== location.byteLength) throw shortRead(read.key, location.id);
        lines[index] = line;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, reads.length) }, worker));
  return lines;
}
