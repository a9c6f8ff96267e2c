import { GetObjectCommand, ListObjectVersionsCommand, type S3Client } from "@aws-sdk/client-s3";
import { decodeGzipBody } from "@svc/common";
import type { SQL } from "bun";
import { MemoryBody } from "./batch-body.ts";
import { QueueConsumerError } from "./errors.ts";
import { type ObjectKeyParts, parseObjectKey } from "./object-key.ts";
import { type ClosedBatch, readIndexFields } from "./partition-batch.ts";
import type { WrittenObject } from "./put-batch-object.ts";
import { writeBatchIndex } from "./write-index.ts";

/** Where to rebuild from and into (the writer's settings: its bucket, key prefix, topic and index schema). */
export interface RebuildTarget {
  /** A reader's client (`readerS3Client`: the writer's refuses a gzip object's GET). */
  s3: S3Client;
  sql: SQL;
  bucket: string;
  keyPrefix: string;
  topic: string;
  schema: string;
  /** UTC days `YYYY-MM-DD` (the keys' `dt=`), both included; unset: every day. */
  fromDay?: string;
  toDay?: string;
  /** Called after each object version listed, with the totals so far. */
  onProgress?: (summary: Readonly<RebuildSummary>) => void;
}

export interface RebuildSummary {
  /** Object versions under the topic's prefix (in the days asked for), delete markers not counted. */
  versions: number;
  /** Versions the index already had (`objects`): not read. */
  alreadyIndexed: number;
  /** Versions read and indexed now. */
  indexed: number;
  /** Event rows inserted (a copy of an event already indexed, from another version or object, is not). */
  eventsInserted: number;
  /** Lines of the versions read that are no indexable record (kept in their object, not in the index). */
  unindexable: number;
  /** Versions under the prefix whose key is no batch object's (`parseObjectKey`): left alone. */
  foreign: number;
  /** The first `FOREIGN_KEYS_SHOWN` of their keys. */
  foreignKeys: string[];
  /** Versions whose line count differs from their `records` metadata (a record value holding a raw newline). */
  recordCountMismatch: string[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const FOREIGN_KEYS_SHOWN = 20;
const DAY_MS = 86_400_000;

/**
 * The `dt=` prefixes to list: one per day from `fromDay` to `toDay`, or the topic's whole prefix when neither is
 * given. Throws `QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID` (the command checks before it touches the database).
 */
export function listPrefixes(target: Pick<RebuildTarget, "keyPrefix" | "topic" | "fromDay" | "toDay">): string[] {
  const topicPrefix = `${target.keyPrefix}v1/${target.topic}/`;
  if (target.fromDay === undefined && target.toDay === undefined) return [topicPrefix];
  for (const [name, day] of [
    ["--from", target.fromDay],
    ["--to", target.toDay],
  ] as const) {
    if (day === undefined || !DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID",
        `${name}: expected a UTC day YYYY-MM-DD with --from and --to both given (got ${JSON.stringify(day)})`,
        { subject: name },
      );
    }
  }
  const from = Date.parse(`${target.fromDay}T00:00:00Z`);
  const to = Date.parse(`${target.toDay}T00:00:00Z`);
  if (to < from) {
    throw new QueueConsumerError("QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID", "--to: before --from", { subject: "--to" });
  }
  const prefixes: string[] = [];
  for (let at = from; at <= to; at += DAY_MS)
    prefixes.push(`${topicPrefix}dt=${new Date(at).toISOString().slice(0, 10)}/`);
  return prefixes;
}

function readFailed(subject: string, action: string, cause: unknown): QueueConsumerError {
  return new QueueConsumerError(
    "QUEUE_CONSUMER_REBUILD_READ_FAILED",
    `${action} ${subject}: ${(cause as Error).message}`,
    { subject, cause },
  );
}

interface Version {
  key: string;
  versionId: string;
  parts: ObjectKeyParts;
}

/** Every object version under `prefix`, page by page (delete markers are not versions with a body). */
async function* versionsUnder(target: RebuildTarget, prefix: string, summary: RebuildSummary): AsyncGenerator<Version> {
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await target.s3
      .send(
        new ListObjectVersionsCommand({
          Bucket: target.bucket,
          Prefix: prefix,
          KeyMarker: keyMarker,
          VersionIdMarker: versionIdMarker,
        }),
      )
      .catch((cause) => {
        throw readFailed(`s3://${target.bucket}/${prefix}`, "cannot list", cause);
      });
    for (const version of page.Versions ?? []) {
      const key = version.Key ?? "";
      const parts = parseObjectKey(key, target.keyPrefix);
      if (!parts || parts.topic !== target.topic) {
        summary.foreign += 1;
        if (summary.foreignKeys.length < FOREIGN_KEYS_SHOWN) summary.foreignKeys.push(key);
        continue;
      }
      yield { key, versionId: version.VersionId ?? "null", parts };
    }
    if (!page.IsTruncated) return;
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}

async function isIndexed(target: RebuildTarget, version: Version): Promise<boolean> {
  try {
    const rows = await target.sql`
      SELECT 1 FROM ${target.sql(`${target.schema}.objects`)}
      WHERE bucket = ${target.bucket} AND key = ${version.key} AND version_id = ${version.versionId}`;
    return rows.length > 0;
  } catch (cause) {
    throw new QueueConsumerError(
      "QUEUE_CONSUMER_INDEX_FAILED",
      `cannot look ${version.key} up in the index: ${(cause as Error).message}`,
      { subject: version.key, canRetry: true, cause },
    );
  }
}

/** An offset from the object's metadata (`first-offset`, `last-offset`), or `fallback` when it has none. */
function metadataOffset(version: Version, meta: Record<string, string>, name: string, fallback: bigint): bigint {
  const text = meta[name];
  if (text === undefined) return fallback;
  if (!/^\d{1,19}$/.test(text)) {
    throw readFailed(version.key, "bad metadata of", new Error(`${name} is ${JSON.stringify(text)}, not an offset`));
  }
  return BigInt(text);
}

/** The version's JSONL as a closed batch (what the writer had when it wrote it), and the object as written. */
async function readVersion(
  target: RebuildTarget,
  version: Version,
): Promise<{ batch: ClosedBatch; object: WrittenObject; recordsMeta: number | undefined }> {
  const answer = await target.s3
    .send(
      new GetObjectCommand({
        Bucket: target.bucket,
        Key: version.key,
        VersionId: version.versionId,
        // A plain object's bytes are checked against its stored CRC-32; a gzip one's by gunzip (`readerS3Client`).
        ChecksumMode: version.parts.gzip ? undefined : "ENABLED",
      }),
    )
    .catch((cause) => {
      throw readFailed(version.key, "cannot read", cause);
    });
  let stored: Uint8Array;
  try {
    stored = (await answer.Body?.transformToByteArray()) ?? new Uint8Array();
  } catch (cause) {
    throw readFailed(version.key, "cannot read", cause);
  }
  let decoded: Uint8Array;
  try {
    decoded = version.parts.gzip ? decodeGzipBody(stored) : stored;
  } catch (cause) {
    throw readFailed(version.key, "cannot gunzip", cause);
  }
  // The writer's body as it was: each line ends in a newline (a last one without is given one).
  let jsonl = Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  if (jsonl.length > 0 && jsonl[jsonl.length - 1] !== 0x0a) jsonl = Buffer.concat([jsonl, Buffer.from("\n")]);
  const lengths: number[] = [];
  for (let start = 0; start < jsonl.length; ) {
    const end = jsonl.indexOf(0x0a, start);
    lengths.push(end - start);
    start = end + 1;
  }
  const body = MemoryBody.of(jsonl);
  const meta = answer.Metadata ?? {};
  const firstOffset = metadataOffset(version, meta, "first-offset", version.parts.firstOffset);
  const records = lengths.length;
  const lastOffset = metadataOffset(version, meta, "last-offset", firstOffset + BigInt(Math.max(0, records - 1)));
  const batch: ClosedBatch = {
    topic: version.parts.topic,
    partition: version.parts.partition,
    firstOffset,
    lastOffset,
    firstTimestampMs: Date.parse(`${version.parts.day}T${version.parts.hour}:00:00Z`),
    body,
    lineLengths: Uint32Array.from(lengths),
    records,
    openedAt: 0,
  };
  const object: WrittenObject = {
    bucket: target.bucket,
    key: version.key,
    versionId: version.versionId,
    bytes: answer.ContentLength ?? stored.length,
    retainUntil: answer.ObjectLockRetainUntilDate ?? new Date(0),
    writtenAt: answer.LastModified ?? new Date(),
  };
  const recordsMeta = meta.records !== undefined ? Number(meta.records) : undefined;
  return { batch, object, recordsMeta };
}

/**
 * Rebuilds the index from the objects (docs/audit-storage.md, "Rebuilding the index"): every object version under
 * the topic's prefix that `objects` does not hold is read and indexed as the writer indexed it when it wrote it
 * (`writeBatchIndex`: event rows, postings, rollups, `marks`), so an event kept by two versions or objects is still
 * one row, and a run stopped half way is resumed by running it again. The schema is created when missing. Throws
 * `QUEUE_CONSUMER_REBUILD_ARGUMENT_INVALID`, `QUEUE_CONSUMER_REBUILD_READ_FAILED` or the index write's errors.
 */
export async function rebuildIndex(target: RebuildTarget): Promise<RebuildSummary> {
  const prefixes = listPrefixes(target);
  const summary: RebuildSummary = {
    versions: 0,
    alreadyIndexed: 0,
    indexed: 0,
    eventsInserted: 0,
    unindexable: 0,
    foreign: 0,
    foreignKeys: [],
    recordCountMismatch: [],
  };
  for (const prefix of prefixes) {
    for await (const version of versionsUnder(target, prefix, summary)) {
      summary.versions += 1;
      if (await isIndexed(target, version)) {
        summary.alreadyIndexed += 1;
      } else {
        const { batch, object, recordsMeta } = await readVersion(target, version);
        if (recordsMeta !== undefined && recordsMeta !== batch.records) summary.recordCountMismatch.push(version.key);
        const sealed = readIndexFields(batch);
        const { inserted } = await writeBatchIndex(target.sql, target.schema, sealed, object);
        summary.indexed += 1;
        summary.eventsInserted += inserted;
        summary.unindexable += sealed.unindexable;
      }
      target.onProgress?.(summary);
    }
  }
  return summary;
}
