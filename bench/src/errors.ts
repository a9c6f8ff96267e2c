import { SvcError, type SvcErrorOptions } from "@svc/common";

export const BENCH_ERROR_CODES = [
  "BENCH_PEER_MISSING",
  "BENCH_PEER_INSTALL_FAILED",
  "BENCH_ARGS_INVALID",
  "BENCH_STEP_FAILED",
  "BENCH_TIMEOUT",
  "BENCH_DISK_LOW",
] as const;

export type BenchErrorCode = (typeof BENCH_ERROR_CODES)[number];

export class BenchError extends SvcError<BenchErrorCode> {
  constructor(code: BenchErrorCode, message: string, options: SvcErrorOptions = {}) {
    super(code, message, options);
  }
}
