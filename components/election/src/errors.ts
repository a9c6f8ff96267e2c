import { SvcError, type SvcErrorOptions } from "@svc/common";

export const ELECTION_ERROR_CODES = [
  "ELECTION_BACKEND_UNSUPPORTED",
  "ELECTION_TIMINGS_INVALID",
  "ELECTION_CONFIG_INVALID",
  "ELECTION_REQUEST_TIMEOUT",
  "ELECTION_LOCK_FAILED",
] as const;

export type ElectionErrorCode = (typeof ELECTION_ERROR_CODES)[number];

/** `subject`: the configuration key at fault (`backend.election.backend`), or the lock a request was for. */
export class ElectionError extends SvcError<ElectionErrorCode> {
  constructor(code: ElectionErrorCode, field: string, message: string, options: Omit<SvcErrorOptions, "subject"> = {}) {
    super(code, `${field}: ${message}`, { ...options, subject: field });
  }
}
