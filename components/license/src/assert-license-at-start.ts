import { LicenseError } from "./errors.ts";
import { type License, type VerifyLicenseOptions, verifyLicense } from "./verify-license.ts";

export const LICENSE_EXIT_CODE = 1;

export type LicenseCheck =
  | { ok: true; license: License; exitCode: 0 }
  | { ok: false; error: LicenseError; exitCode: number; message: string };

export interface AssertLicenseOptions extends VerifyLicenseOptions {
  /** Where the one-line message goes (default: stderr). */
  write?: (line: string) => void;
}

/** One line: what is wrong, which file, and what to do. */
export function licenseFailureMessage(error: LicenseError, path: string): string {
  return `license check failed [${error.code}]: ${error.message} (license file: ${path}); replace token.jwt and restart the service`;
}

/**
 * For a service's main.ts: verifies the license at start. On a license failure it writes one line and returns
 * a non-zero exit code; it never exits the process itself (main decides). Errors that are not license
 * failures are rethrown.
 */
export async function assertLicenseAtStart(options: AssertLicenseOptions): Promise<LicenseCheck> {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  try {
    const license = await verifyLicense(options);
    return { ok: true, license, exitCode: 0 };
  } catch (error) {
    if (!(error instanceof LicenseError)) throw error;
    const message = licenseFailureMessage(error, options.path);
    write(message);
    return { ok: false, error, exitCode: LICENSE_EXIT_CODE, message };
  }
}
