export const ELECTION_ERROR_CODES = ["ELECTION_BACKEND_UNSUPPORTED", "ELECTION_TIMINGS_INVALID"] as const;

export type ElectionErrorCode = (typeof ELECTION_ERROR_CODES)[number];

export class ElectionError extends Error {
  readonly code: ElectionErrorCode;
  /** The configuration key at fault, e.g. `backend.election.backend`. */
  readonly field: string;

  constructor(code: ElectionErrorCode, field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "ElectionError";
    this.code = code;
    this.field = field;
  }
}
