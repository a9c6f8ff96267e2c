/** Stable codes of the IdP seed's failures; tests assert on these, never on message text. */
export const IDP_SEED_ERROR_CODES = [
  "IDP_SEED_CONFIG_INVALID",
  "IDP_UNREACHABLE",
  "IDP_ADMIN_AUTH_FAILED",
  "IDP_ADMIN_REQUEST_FAILED",
] as const;

export type IdpSeedErrorCode = (typeof IDP_SEED_ERROR_CODES)[number];

export class IdpSeedError extends Error {
  readonly code: IdpSeedErrorCode;
  /** The config field or admin API path the failure is about, when there is one. */
  readonly subject: string | undefined;
  /** HTTP status of the failed admin call, when there was a response. */
  readonly status: number | undefined;

  constructor(
    code: IdpSeedErrorCode,
    message: string,
    details: { subject?: string; status?: number } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "IdpSeedError";
    this.code = code;
    this.subject = details.subject;
    this.status = details.status;
  }
}
