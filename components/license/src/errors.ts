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

export class LicenseError extends Error {
  readonly code: LicenseErrorCode;
  /** The license or key file (or config field) the failure is about. */
  readonly path: string | undefined;

  constructor(code: LicenseErrorCode, message: string, path?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LicenseError";
    this.code = code;
    this.path = path;
  }
}
