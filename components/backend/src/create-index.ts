import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { NewShard, TaskStore } from "./task-store.ts";

export interface CreateIndexOptions {
  store: TaskStore;
  s3: S3Client;
  bucket: string;
  prefix: string;
  term: number;
  name: string;
  shardCount: number;
}

/**
 * Creates an index (docs/components.md): every shard's object is written first (immutable; a retry writes a new
 * version under the same key, and the record names the bytes by SHA-256), then the index, shard and key records
 * in one fenced transaction. The orchestrator places the shards at its next reconciliation.
 */
export async function createIndex(options: CreateIndexOptions): Promise<string[]> {
  const { name, shardCount } = options;
  const shards: NewShard[] = [];
  for (let n = 0; n < shardCount; n++) {
    const shardId = `${name}/${n}`;
    const objectKey = `${options.prefix}indexes/${name}/shards/${n}`;
    const body = crypto.getRandomValues(new Uint8Array(1024));
    await options.s3.send(
      new PutObjectCommand({ Bucket: options.bucket, Key: objectKey, Body: body, ChecksumAlgorithm: "SHA256" }),
    );
    const sha256 = new Bun.CryptoHasher("sha256").update(body).digest("hex");
    shards.push({ shardId, objectKey, sha256, sizeBytes: body.length });
  }
  const material = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  await options.store.createIndex(options.term, name, shards, {
    indexName: name,
    keyId: Bun.randomUUIDv7(),
    material,
  });
  return shards.map((s) => s.shardId);
}
