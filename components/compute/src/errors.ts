import { SvcError } from "@svc/common";

/** Every code of compute (one list; tests assert on `.code`). */
export const COMPUTE_ERROR_CODES = [
  /** The shard's record is missing (the index was deleted meanwhile). */
  "COMPUTE_SHARD_UNKNOWN",
  /** The object's bytes do not match the shard's SHA-256 (or size): it is not loaded. */
  "COMPUTE_SHARD_CORRUPT",
  /** The object could not be read from S3. */
  "COMPUTE_SHARD_UNREADABLE",
] as const;

export type ComputeErrorCode = (typeof COMPUTE_ERROR_CODES)[number];

export class ComputeError extends SvcError<ComputeErrorCode> {}
