/**
 * The key of a batch object (docs/audit-storage.md, "Key"):
 * `<prefix>v1/<topic>/dt=YYYY-MM-DD/hour=HH/partition=PPP/<first offset, 20 digits>.jsonl[.gz]`.
 * Everything is fixed by the batch's first record (its Kafka timestamp, UTC, and its offset), so a batch written
 * again after a crash lands on the same key.
 */
export function objectKey(parts: {
  prefix: string;
  topic: string;
  partition: number;
  firstOffset: bigint;
  firstTimestampMs: number;
  gzip: boolean;
}): string {
  const at = new Date(parts.firstTimestampMs);
  const day = at.toISOString().slice(0, 10);
  const hour = String(at.getUTCHours()).padStart(2, "0");
  const partition = String(parts.partition).padStart(3, "0");
  const offset = parts.firstOffset.toString().padStart(20, "0");
  const suffix = parts.gzip ? ".jsonl.gz" : ".jsonl";
  return `${parts.prefix}v1/${parts.topic}/dt=${day}/hour=${hour}/partition=${partition}/${offset}${suffix}`;
}
