import { SvcError } from "@svc/common";

export const ELECTION_ERROR_CODES = ["ELECTION_BACKEND_UNSUPPORTED", "ELECTION_TIMINGS_INVALID"] as const;

export type ElectionErrorCode = (typeof ELECTION_ERROR_CODES)[number];

/** `subject`: the configuration key at fault, e.g. `backend.election.backend`. */
export class ElectionError extends SvcError<ElectionErrorCode> {
  constructor(code: ElectionErrorCode, field: string, message: string) {
    super(code, `${field}: ${message}`, { subject: field });
  }
}
