import { SvcError } from "@svc/common";

/** Stable codes of license failures; callers and tests branch on these, never on message text. */
export const LICENSE_ERROR_CODES = [
  "LICENSE_UNREADABLE",
  "LICENSE_MALFORMED",
  "LICENSE_INVALID_SIGNATURE",
  "LICENSE_EXPIRED",
  "LICENSE_NOT_YET_VALID",
  "LICENSE_KEY_INVALID",
  "LICENSE_CONFIG_INVALID",
] as const;

export type LicenseErrorCode = (typeof LICENSE_ERROR_CODES)[number];

/** `subject`: the license or key file (or config field) the failure is about. */
export class LicenseError extends SvcError<LicenseErrorCode> {
  constructor(code: LicenseErrorCode, message: string, subject?: string, options?: ErrorOptions) {
    super(code, message, { subject, cause: options?.cause });
  }
}
