import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { tableOf } from "@svc/component-runtime";
import { dutyCounter } from "@svc/component-runtime/metrics";
import { ElectionError, withRequestTimeout } from "@svc/election";
import type { SQL } from "bun";
import { COMPUTE_ERROR_CODES, ComputeError } from "./errors.ts";

const shardsLoaded = dutyCounter(
  "svc_compute_shards_loaded_total",
  "Shards loaded from object storage and checked against their record (held from then on)",
);
const loadFailures = dutyCounter(
  "svc_compute_shard_load_failures_total",
  "Shard loads that failed, by error code (unreadable or timed out, corrupt, unknown); tried again at the next sync",
  ["code"],
);
for (const code of COMPUTE_ERROR_CODES) loadFailures.inc({ code }, 0);

export interface LoadedShard {
  shardId: string;
  sizeBytes: number;
  sha256: string;
  bytes: Uint8Array;
}

interface ShardRecord {
  object_key: string;
  sha256: string;
  size_bytes: string | number;
}

/**
 * The shards this replica holds in memory (docs/components.md). `sync(assigned)` loads every assigned shard it does
 * not hold — the shard's record from PostgreSQL, the object from S3, checked against the record's SHA-256 and size —
 * and drops the ones no longer assigned. A shard that fails to load is not held (and so not reported); it is tried
 * again at the next sync. Each load is bounded by `loadTimeoutMs` (the S3 request is aborted): the serving
 * replica's heartbeats wait for `sync`, so an object store that accepts a request and never answers must not hold
 * them for ever (the orchestrator would mark the node lost while it still leads, and its shards would never load).
 */
export class ShardHolder {
  private readonly held = new Map<string, LoadedShard>();
  private readonly shards: string;

  constructor(
    private readonly sql: SQL,
    schema: string,
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly loadTimeoutMs: number,
  ) {
    this.shards = tableOf(schema, "shards");
  }

  /** Loads what is missing, drops what is extra; answers the failures (one per shard that did not load). */
  async sync(assigned: readonly string[]): Promise<ComputeError[]> {
    const wanted = new Set(assigned);
    for (const id of this.held.keys()) if (!wanted.has(id)) this.held.delete(id);
    const failures: ComputeError[] = [];
    for (const id of assigned) {
      if (this.held.has(id)) continue;
      try {
        this.held.set(id, await this.loadWithin(id));
        shardsLoaded.inc();
      } catch (error) {
        const failure =
          error instanceof ComputeError
            ? error
            : new ComputeError("COMPUTE_SHARD_UNREADABLE", `${id}: ${(error as Error).message}`, {
                subject: id,
                canRetry: true,
                cause: error,
              });
        loadFailures.inc({ code: failure.code });
        failures.push(failure);
      }
    }
    return failures;
  }

  /** `load` within `loadTimeoutMs`: the S3 GET is aborted then, and the load given up even if it ignored the abort. */
  private async loadWithin(id: string): Promise<LoadedShard> {
    try {
      return await withRequestTimeout(id, this.loadTimeoutMs, (signal) => this.load(id, signal));
    } catch (error) {
      if (!(error instanceof ElectionError && error.code === "ELECTION_REQUEST_TIMEOUT")) throw error;
      throw new ComputeError("COMPUTE_SHARD_UNREADABLE", `${id}: not loaded within ${this.loadTimeoutMs} ms`, {
        subject: id,
        canRetry: true,
        cause: error,
      });
    }
  }

  private async load(id: string, signal: AbortSignal): Promise<LoadedShard> {
    const rows: ShardRecord[] = await this.sql.unsafe(
      `SELECT object_key, sha256, size_bytes FROM ${this.shards} WHERE shard_id = $1`,
      [id],
    );
    const record = rows[0];
    if (!record) throw new ComputeError("COMPUTE_SHARD_UNKNOWN", `${id}: no such shard`, { subject: id });
    const object = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: record.object_key }), {
      abortSignal: signal,
    });
    const bytes = await object.Body?.transformToByteArray();
    if (!bytes)
      throw new ComputeError("COMPUTE_SHARD_UNREADABLE", `${id}: empty body`, { subject: id, canRetry: true });
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    if (sha256 !== record.sha256 || bytes.length !== Number(record.size_bytes)) {
      throw new ComputeError(
        "COMPUTE_SHARD_CORRUPT",
        `${id}: object ${record.object_key} has sha256 ${sha256} (${bytes.length} bytes), the record says ${record.sha256} (${record.size_bytes} bytes)`,
        { subject: id },
      );
    }
    return { shardId: id, sizeBytes: bytes.length, sha256, bytes };
  }

  /** Identifiers of the held shards, sorted. */
  ids(): string[] {
    return [...this.held.keys()].sort();
  }

  list(): LoadedShard[] {
    return this.ids().map((id) => this.held.get(id) as LoadedShard);
  }

  clear(): void {
    this.held.clear();
  }
}
