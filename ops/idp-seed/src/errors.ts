import { SvcError } from "@svc/common";

/** Stable codes of the IdP seed's failures; tests assert on these, never on message text. */
export const IDP_SEED_ERROR_CODES = [
  "IDP_SEED_CONFIG_INVALID",
  "IDP_UNREACHABLE",
  "IDP_ADMIN_AUTH_FAILED",
  "IDP_ADMIN_REQUEST_FAILED",
] as const;

export type IdpSeedErrorCode = (typeof IDP_SEED_ERROR_CODES)[number];

/** `subject`: the config field or admin API path the failure is about. An unreachable IdP may answer later. */
export class IdpSeedError extends SvcError<IdpSeedErrorCode> {
  /** HTTP status of the failed admin call, when there was a response. */
  readonly status: number | undefined;

  constructor(
    code: IdpSeedErrorCode,
    message: string,
    details: { subject?: string; status?: number } = {},
    options?: ErrorOptions,
  ) {
    const canRetry = code === "IDP_UNREACHABLE" || (details.status !== undefined && details.status >= 500);
    super(code, message, { subject: details.subject, canRetry, cause: options?.cause });
    this.status = details.status;
  }
}
