/** The last ms of year 9999 UTC: later days have no `YYYY-MM-DD` (`+010000-01-01`, which `parseObjectKey` refuses). */
const LAST_KEY_MS = Date.UTC(10_000, 0, 1) - 1;
/** The first ms of year 0000 UTC (`Date.UTC` reads years 0–99 as 1900–1999): earlier days read `-000001-…`. */
const FIRST_KEY_MS = Date.parse("0000-01-01T00:00:00.000Z");

/**
 * The moment whose UTC day and hour partition a batch first stamped `timestampMs`: that stamp when it lies in years
 * 0000 to 9999 (Kafka's -1 for "none" is `dt=1969-12-31/hour=23`, as it always was), else the epoch
 * (`dt=1970-01-01/hour=00`). A stamp outside them is a producer's clock or field gone wrong (past ±8.64e15 ms no
 * `Date` holds it); the writer's clock instead would put the same batch, written again after a crash, under another
 * key.
 */
function partitionTime(timestampMs: number): Date {
  return new Date(timestampMs >= FIRST_KEY_MS && timestampMs <= LAST_KEY_MS ? timestampMs : 0);
}

/**
 * The key of a batch object (docs/audit-storage.md, "Key"):
 * `<prefix>v1/<topic>/dt=YYYY-MM-DD/hour=HH/partition=PPP/<first offset, 20 digits>.jsonl[.gz]`.
 * Everything is fixed by the batch's first record (its Kafka timestamp, UTC, or the epoch when that is outside
 * years 0000 to 9999: `partitionTime`, and its offset), so a batch written again after a crash lands on the same key.
 */
export function objectKey(parts: {
  prefix: string;
  topic: string;
  partition: number;
  firstOffset: bigint;
  firstTimestampMs: number;
  gzip: boolean;
}): string {
  const at = partitionTime(parts.firstTimestampMs);
  const day = at.toISOString().slice(0, 10);
  const hour = String(at.getUTCHours()).padStart(2, "0");
  const partition = String(parts.partition).padStart(3, "0");
  const offset = parts.firstOffset.toString().padStart(20, "0");
  const suffix = parts.gzip ? ".jsonl.gz" : ".jsonl";
  return `${parts.prefix}v1/${parts.topic}/dt=${day}/hour=${hour}/partition=${partition}/${offset}${suffix}`;
}

/** What a batch object's key says (`objectKey`'s parts, its day and hour as written). */
export interface ObjectKeyParts {
  topic: string;
  /** `YYYY-MM-DD` and `HH` of the batch's first record's Kafka timestamp (UTC). */
  day: string;
  hour: string;
  partition: number;
  firstOffset: bigint;
  gzip: boolean;
}

const KEY_LAYOUT = /^v1\/([^/]+)\/dt=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/partition=(\d{3,})\/(\d{20})\.jsonl(\.gz)?$/;

/** The parts of a key `objectKey` made under `prefix`; undefined for any other key (not a batch object). */
export function parseObjectKey(key: string, prefix: string): ObjectKeyParts | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const match = KEY_LAYOUT.exec(key.slice(prefix.length));
  if (!match) return undefined;
  const [, topic, day, hour, partition, offset, gz] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  return { topic, day, hour, partition: Number(partition), firstOffset: BigInt(offset), gzip: gz !== undefined };
}
