import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AuthConfigError } from "./errors.ts";

/** Asymmetric JWS algorithms the verifier may be configured with. `none` and every HS* are absent on purpose. */
export const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

const csv = (pattern: string) => Type.String({ pattern });

/**
 * The value `SVC_AUTH_DISABLED_ACKNOWLEDGE` must have for `SVC_AUTH_DISABLED=true` to take effect: turning auth
 * off takes two explicit settings, so one stray variable (a copied `.env`, a Helm value) cannot do it.
 */
export const AUTH_DISABLED_ACKNOWLEDGEMENT = "test-environment-only";

/** The env variables read by the auth module, as strings (the shape `process.env` has). */
export const AuthEnvSchema = Type.Object(
  {
    SVC_AUTH_ISSUER: Type.Optional(Type.String({ pattern: "^https?://[^\\s]+$" })),
    SVC_AUTH_ALLOWED_AUDIENCES: Type.Optional(csv("^[^,\\s]+(\\s*,\\s*[^,\\s]+)*$")),
    SVC_AUTH_ALGORITHMS: Type.Optional(csv("^[A-Za-z0-9]+(\\s*,\\s*[A-Za-z0-9]+)*$")),
    SVC_AUTH_CLOCK_TOLERANCE_SECONDS: Type.Optional(Type.String({ pattern: "^[0-9]+$" })),
    SVC_AUTH_JWKS_COOLDOWN_SECONDS: Type.Optional(Type.String({ pattern: "^[0-9]+$" })),
    SVC_AUTH_CACHE_MAX_ENTRIES: Type.Optional(Type.String({ pattern: "^[0-9]+$" })),
    SVC_AUTH_DISABLED: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")])),
    SVC_AUTH_DISABLED_ACKNOWLEDGE: Type.Optional(Type.Literal(AUTH_DISABLED_ACKNOWLEDGEMENT)),
  },
  { additionalProperties: true },
);

/** Defaults and bounds, side by side with the schema. */
export const AUTH_DEFAULTS = {
  allowedAudiences: ["svc-cli"],
  algorithms: ["RS256", "PS256", "ES256"] as AsymmetricAlgorithm[],
  clockToleranceSeconds: 30,
  jwksCooldownSeconds: 30,
  cacheMaxEntries: 10_000,
} as const;

export const AUTH_LIMITS = {
  clockToleranceSeconds: { min: 0, max: 300 },
  jwksCooldownSeconds: { min: 1, max: 3600 },
  cacheMaxEntries: { min: 0, max: 1_000_000 },
} as const;

export interface AuthConfig {
  /** `true` only when `SVC_AUTH_DISABLED=true` and `SVC_AUTH_DISABLED_ACKNOWLEDGE=test-environment-only` were given. */
  disabled: boolean;
  /** Exact issuer URL (`iss` claim and discovery `issuer`); `undefined` only when disabled. */
  issuer: string | undefined;
  allowedAudiences: string[];
  algorithms: AsymmetricAlgorithm[];
  clockToleranceSeconds: number;
  jwksCooldownSeconds: number;
  /** 0 turns the verified-token cache off. */
  cacheMaxEntries: number;
}

export type AuthEnv = Static<typeof AuthEnvSchema>;

function integer(env: AuthEnv, field: keyof typeof AUTH_LIMITS & string, envName: keyof AuthEnv, fallback: number) {
  const raw = env[envName];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  const { min, max } = AUTH_LIMITS[field];
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new AuthConfigError(envName, `expected an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
  }
  return value;
}

function list(raw: string | undefined): string[] | undefined {
  return raw?.split(",").map((item) => item.trim());
}

/**
 * Parses the `SVC_AUTH_*` variables from the env object given (never `process.env` itself). Values are trimmed; an
 * empty or blank one counts as unset, so everything after the schema check sees only non-blank values.
 * A bad value throws `AuthConfigError` naming the variable. Auth is on unless `SVC_AUTH_DISABLED=true` AND
 * `SVC_AUTH_DISABLED_ACKNOWLEDGE=test-environment-only`; the first without the second is refused.
 */
export function parseAuthConfig(env: Record<string, string | undefined>): AuthConfig {
  const present: Record<string, string> = {};
  for (const key of Object.keys(AuthEnvSchema.properties)) {
    const value = env[key]?.trim();
    if (value) present[key] = value;
  }
  const first = Value.Errors(AuthEnvSchema, present).First();
  if (first) {
    const field = first.path.replace(/^\//, "") || "SVC_AUTH";
    throw new AuthConfigError(field, `${first.message}, got ${JSON.stringify(first.value)}`);
  }
  const parsed = present as AuthEnv;
  const disabled = parsed.SVC_AUTH_DISABLED === "true";
  if (disabled && parsed.SVC_AUTH_DISABLED_ACKNOWLEDGE !== AUTH_DISABLED_ACKNOWLEDGEMENT) {
    throw new AuthConfigError(
      "SVC_AUTH_DISABLED_ACKNOWLEDGE",
      `SVC_AUTH_DISABLED=true turns every auth check off and needs SVC_AUTH_DISABLED_ACKNOWLEDGE=` +
        `${AUTH_DISABLED_ACKNOWLEDGEMENT} as well (test environments only); unset SVC_AUTH_DISABLED to keep auth on`,
    );
  }
  const issuer = parsed.SVC_AUTH_ISSUER;
  if (!disabled && issuer === undefined) {
    throw new AuthConfigError("SVC_AUTH_ISSUER", "required unless auth is disabled (SVC_AUTH_DISABLED=true)");
  }

  const algorithms = (list(parsed.SVC_AUTH_ALGORITHMS) ?? [...AUTH_DEFAULTS.algorithms]).map((alg) => {
    if (alg.toLowerCase() === "none" || /^HS/i.test(alg)) {
      throw new AuthConfigError("SVC_AUTH_ALGORITHMS", `${alg} is not allowed (only asymmetric algorithms)`);
    }
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new AuthConfigError(
        "SVC_AUTH_ALGORITHMS",
        `unknown algorithm ${alg}; one of ${ASYMMETRIC_ALGORITHMS.join(",")}`,
      );
    }
    return alg as AsymmetricAlgorithm;
  });

  return {
    disabled,
    issuer,
    allowedAudiences: list(parsed.SVC_AUTH_ALLOWED_AUDIENCES) ?? [...AUTH_DEFAULTS.allowedAudiences],
    algorithms: [...new Set(algorithms)],
    clockToleranceSeconds: integer(
      parsed,
      "clockToleranceSeconds",
      "SVC_AUTH_CLOCK_TOLERANCE_SECONDS",
      AUTH_DEFAULTS.clockToleranceSeconds,
    ),
    jwksCooldownSeconds: integer(
      parsed,
      "jwksCooldownSeconds",
      "SVC_AUTH_JWKS_COOLDOWN_SECONDS",
      AUTH_DEFAULTS.jwksCooldownSeconds,
    ),
    cacheMaxEntries: integer(parsed, "cacheMaxEntries", "SVC_AUTH_CACHE_MAX_ENTRIES", AUTH_DEFAULTS.cacheMaxEntries),
  };
}
