export {
  type AssertLicenseOptions,
  assertLicenseAtStart,
  LICENSE_EXIT_CODE,
  type LicenseCheck,
  licenseFailureMessage,
} from "./src/assert-license-at-start.ts";
export { type LicenseConfig, type LicenseEnv, LicenseEnvSchema, parseLicenseConfig } from "./src/config.ts";
export { LICENSE_ERROR_CODES, LicenseError, type LicenseErrorCode } from "./src/errors.ts";
export { importLicenseKey, LICENSE_ALGORITHMS, type LicenseAlgorithm, type LicenseKey } from "./src/public-key.ts";
export { DEFAULT_WARN_DAYS, type License, type VerifyLicenseOptions, verifyLicense } from "./src/verify-license.ts";
