import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { LicenseError } from "./errors.ts";

/** License settings from the environment (only the keys below are read; other variables are ignored). */
export const LicenseEnvSchema = Type.Object({
  /** Path of the license token; default `token.jwt` (spec). */
  SVC_LICENSE_FILE: Type.String({ minLength: 1, default: "token.jwt" }),
  /** Path of the SPKI PEM public key that verifies the license signature. */
  SVC_LICENSE_PUBLIC_KEY_FILE: Type.String({ minLength: 1 }),
});

export type LicenseEnv = Static<typeof LicenseEnvSchema>;

export interface LicenseConfig {
  licenseFile: string;
  publicKeyFile: string;
}

export function parseLicenseConfig(env: Record<string, string | undefined>): LicenseConfig {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(LicenseEnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  const withDefaults = Value.Default(LicenseEnvSchema, picked);
  const first = Value.Errors(LicenseEnvSchema, withDefaults).First();
  if (first) {
    const field = first.path.replace(/^\//, "");
    throw new LicenseError(
      "LICENSE_CONFIG_INVALID",
      `${field}: ${first.message} (got ${JSON.stringify(first.value)})`,
      field,
    );
  }
  const parsed = withDefaults as LicenseEnv;
  return { licenseFile: parsed.SVC_LICENSE_FILE, publicKeyFile: parsed.SVC_LICENSE_PUBLIC_KEY_FILE };
}
