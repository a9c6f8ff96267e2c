import { existsSync, statfsSync, statSync } from "node:fs";
import { BenchError } from "../errors.ts";
import type { BenchArgs } from "./args.ts";
import { RECORD_BYTES } from "./generate-records.ts";
import { latencyPlan } from "./latency-section.ts";

/** A record in a Kafka log segment: the line and its record and batch overhead (measured ~430–450 B per 401 B). */
const KAFKA_RECORD_BYTES = 450;
/** A record in a MinIO object: the line (the object's erasure metadata is small beside a batch). */
const OBJECT_RECORD_BYTES = RECORD_BYTES + 1;
/** An indexed record in PostgreSQL: its `events` row, its two B-tree entries and its share of the rollups. */
const INDEX_RECORD_BYTES = 400;
/** Room left over for the stack's own growth while the bench runs: PostgreSQL's WAL (`max_wal_size` 4 GiB), logs. */
export const DISK_MARGIN_BYTES = 4 * 2 ** 30;

export interface DiskNeeds {
  /** The run's temporary directory: the record file, `kcat -C`'s copy per round, each latency row's file. */
  tempBytes: number;
  /** Kafka's topics, PostgreSQL's index (both dropped at the end of the run) and MinIO's objects (kept). */
  stackBytes: number;
}

/**
 * What a run writes to disk, as `args` asks: the record file; per throughput round three topics of every record
 * (kcat's, the agent's, end to end's), `kcat -C`'s file, and two objects and index rows' worth of every record (the
 * consumer's and end to end's); per latency row its file and its records in a topic, objects and index rows. Topics,
 * index schemas and files go at the end of the run; objects stay under Object Lock for the bucket's retention (the
 * stack's bucket: 1 day, then its lifecycle removes them a day later), so runs in a row add up.
 */
export function diskNeeds(
  args: Pick<BenchArgs, "records" | "rates" | "seconds" | "batchAges" | "rounds" | "sections">,
): DiskNeeds {
  const wants = (section: BenchArgs["sections"][number]) => args.sections.includes(section);
  const throughput = wants("peers") || wants("agent") || wants("consumer") || wants("e2e");
  const rounds = throughput ? args.rounds : 0;
  const latencyRecords = wants("latency")
    ? latencyPlan(args.rates, args.batchAges).reduce((sum, { rate }) => sum + rate * args.seconds, 0)
    : 0;
  const topicsPerRound =
    (wants("peers") ? 1 : 0) + (wants("agent") || wants("consumer") ? 1 : 0) + (wants("e2e") ? 1 : 0);
  const objectsPerRound = (wants("consumer") ? 1 : 0) + (wants("e2e") ? 1 : 0);
  const records = args.records;
  const stored = OBJECT_RECORD_BYTES + INDEX_RECORD_BYTES;
  return {
    tempBytes: (records * (1 + (wants("peers") ? rounds : 0)) + latencyRecords) * OBJECT_RECORD_BYTES,
    stackBytes:
      rounds * records * (topicsPerRound * KAFKA_RECORD_BYTES + objectsPerRound * stored) +
      latencyRecords * (KAFKA_RECORD_BYTES + stored),
  };
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;

/** Bytes free to an unprivileged writer on the file system that holds `path`. */
export function freeBytes(path: string): number {
  const stats = statfsSync(path);
  return Number(stats.bavail) * Number(stats.bsize);
}

/**
 * Refuses a run that would fill a disk (`BENCH_DISK_LOW`): a full disk stops Kafka and MinIO mid-run and every row
 * after fails. `tempDir` holds the run's files; `stateDir` is the local stack's (skipped when the stack is not on
 * this machine). Where both are on one file system, their needs add up. `marginBytes` is kept free beyond them.
 */
export function checkDiskRoom(
  needs: DiskNeeds,
  tempDir: string,
  stateDir: string | undefined,
  marginBytes = DISK_MARGIN_BYTES,
): void {
  const places = [{ path: tempDir, bytes: needs.tempBytes, what: "the run's files" }];
  if (stateDir !== undefined && existsSync(stateDir)) {
    places.push({ path: stateDir, bytes: needs.stackBytes, what: "Kafka's topics and MinIO's objects" });
  }
  const byDevice = new Map<number, { path: string; bytes: number; what: string[] }>();
  for (const place of places) {
    const device = Number(statSync(place.path).dev);
    const entry = byDevice.get(device) ?? { path: place.path, bytes: 0, what: [] };
    entry.bytes += place.bytes;
    entry.what.push(place.what);
    byDevice.set(device, entry);
  }
  for (const { path, bytes, what } of byDevice.values()) {
    const free = freeBytes(path);
    if (free < bytes + marginBytes) {
      throw new BenchError(
        "BENCH_DISK_LOW",
        `this run writes about ${gb(bytes)} (${what.join(" and ")}) on the file system of ${path}, which has ` +
          `${gb(free)} free (${gb(marginBytes)} kept spare for PostgreSQL's WAL and the logs): fewer --records, --rounds or rates, or room — ` +
          "each run's objects stay in MinIO under Object Lock for the bucket's retention, and `ops/dev down --purge` " +
          "empties the local stack",
        { subject: path },
      );
    }
  }
}
