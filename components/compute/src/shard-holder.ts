import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { tableOf } from "@svc/component-runtime";
import type { SQL } from "bun";
import { ComputeError } from "./errors.ts";

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
 * again at the next sync.
 */
export class ShardHolder {
  private readonly held = new Map<string, LoadedShard>();
  private readonly shards: string;

  constructor(
    private readonly sql: SQL,
    schema: string,
    private readonly s3: S3Client,
    private readonly bucket: string,
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
        this.held.set(id, await this.load(id));
      } catch (error) {
        failures.push(
          error instanceof ComputeError
            ? error
            : new ComputeError("COMPUTE_SHARD_UNREADABLE", `${id}: ${(error as Error).message}`, {
                subject: id,
                canRetry: true,
                cause: error,
              }),
        );
      }
    }
    return failures;
  }

  private async load(id: string): Promise<LoadedShard> {
    const rows: ShardRecord[] = await this.sql.unsafe(
      `SELECT object_key, sha256, size_bytes FROM ${this.shards} WHERE shard_id = $1`,
      [id],
    );
    const record = rows[0];
    if (!record) throw new ComputeError("COMPUTE_SHARD_UNKNOWN", `${id}: no such shard`, { subject: id });
    const object = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: record.object_key }));
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
