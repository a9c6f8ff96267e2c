/** A byte range `[start, end)` of one object version. */
export interface VersionSpan {
  bucket: string;
  key: string;
  versionId: string;
  start: number;
  end: number;
}

/** One GET: a span of one object version and the positions (in the planned list) of the items it holds. */
export interface PlannedRead extends VersionSpan {
  indices: number[];
}

/**
 * Groups `items` by object version and merges their spans into GETs: sorted by start, a span closer than
 * `mergeBytes` to the read before it joins that read (docs/audit-storage.md, "Pages and exports"); a gzip object
 * (`.gz`) is read whole, once. `spanOf` gives an item's span; items of one version usually come together (pages and
 * runs go through one object after another), so the version's key is built only when the version changes.
 */
export function planReads<T>(items: readonly T[], spanOf: (item: T) => VersionSpan, mergeBytes: number): PlannedRead[] {
  const byVersion = new Map<string, { index: number; span: VersionSpan }[]>();
  let previous: VersionSpan | undefined;
  let list: { index: number; span: VersionSpan }[] = [];
  for (const [index, item] of items.entries()) {
    const span = spanOf(item);
    const same =
      previous !== undefined &&
      previous.key === span.key &&
      previous.versionId === span.versionId &&
      previous.bucket === span.bucket;
    if (!same) {
      const id = `${span.bucket}\u0000${span.key}\u0000${span.versionId}`;
      list = byVersion.get(id) ?? [];
      byVersion.set(id, list);
    }
    list.push({ index, span });
    previous = span;
  }
  const reads: PlannedRead[] = [];
  for (const entries of byVersion.values()) {
    entries.sort((a, b) => a.span.start - b.span.start);
    const whole = entries[0]?.span.key.endsWith(".gz") === true;
    let current: PlannedRead | undefined;
    for (const { index, span } of entries) {
      if (current && (whole || span.start - current.end <= mergeBytes)) {
        current.end = Math.max(current.end, span.end);
        current.indices.push(index);
        continue;
      }
      current = {
        bucket: span.bucket,
        key: span.key,
        versionId: span.versionId,
        start: span.start,
        end: span.end,
        indices: [index],
      };
      reads.push(current);
    }
  }
  return reads;
}
