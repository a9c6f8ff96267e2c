import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AUTH_DEFAULTS, AuthConfigError, parseAuthConfig } from "../index.ts";

const ISSUER = "http://127.0.0.1:8082/realms/svc";

/** The env field a refused config names; fails the test when `parseAuthConfig` accepts `env`. */
function fieldOf(env: Record<string, string>): string {
  const error = thrownBy(() => parseAuthConfig(env), AuthConfigError);
  expect(error.code).toBe("AUTH_CONFIG_INVALID");
  return error.subject ?? "";
}

test("defaults: enabled, audience svc-cli, RS256/PS256/ES256, 30 s tolerance and cooldown, 10000 entries", () => {
  expect(parseAuthConfig({ SVC_AUTH_ISSUER: ISSUER })).toEqual({
    disabled: false,
    issuer: ISSUER,
    allowedAudiences: ["svc-cli"],
    algorithms: ["RS256", "PS256", "ES256"],
    clockToleranceSeconds: 30,
    jwksCooldownSeconds: 30,
    cacheMaxEntries: 10_000,
  });
  expect(AUTH_DEFAULTS.cacheMaxEntries).toBe(10_000);
});

test("explicit values are parsed", () => {
  const config = parseAuthConfig({
    SVC_AUTH_ISSUER: ISSUER,
    SVC_AUTH_ALLOWED_AUDIENCES: "svc-cli, svc-sdk",
    SVC_AUTH_ALGORITHMS: "ES256",
    SVC_AUTH_CLOCK_TOLERANCE_SECONDS: "0",
    SVC_AUTH_JWKS_COOLDOWN_SECONDS: "60",
    SVC_AUTH_CACHE_MAX_ENTRIES: "0",
    SVC_AUTH_DISABLED: "false",
    UNRELATED: "ignored",
  });
  expect(config).toMatchObject({
    allowedAudiences: ["svc-cli", "svc-sdk"],
    algorithms: ["ES256"],
    clockToleranceSeconds: 0,
    jwksCooldownSeconds: 60,
    cacheMaxEntries: 0,
    disabled: false,
  });
});

const ACK = { SVC_AUTH_DISABLED_ACKNOWLEDGE: "test-environment-only" } as const;

test("the issuer is required unless auth is disabled explicitly", () => {
  expect(fieldOf({})).toBe("SVC_AUTH_ISSUER");
  expect(fieldOf({ SVC_AUTH_DISABLED: "false" })).toBe("SVC_AUTH_ISSUER");
  expect(parseAuthConfig({ SVC_AUTH_DISABLED: "true", ...ACK })).toMatchObject({ disabled: true, issuer: undefined });
});

test("SVC_AUTH_DISABLED=true alone is refused: it needs SVC_AUTH_DISABLED_ACKNOWLEDGE=test-environment-only", () => {
  const alone = thrownBy(() => parseAuthConfig({ SVC_AUTH_DISABLED: "true" }), AuthConfigError);
  expect(alone.code).toBe("AUTH_CONFIG_INVALID");
  expect(alone.subject).toBe("SVC_AUTH_DISABLED_ACKNOWLEDGE");
  expect(alone.message).toContain("SVC_AUTH_DISABLED_ACKNOWLEDGE=test-environment-only");
  // also with an issuer set: the second setting is what makes "off" explicit, not the missing issuer
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_DISABLED: "true" })).toBe("SVC_AUTH_DISABLED_ACKNOWLEDGE");
  for (const value of ["true", "yes", "test", "TEST-ENVIRONMENT-ONLY"]) {
    expect(fieldOf({ SVC_AUTH_DISABLED: "true", SVC_AUTH_DISABLED_ACKNOWLEDGE: value })).toBe(
      "SVC_AUTH_DISABLED_ACKNOWLEDGE",
    );
  }
  // the acknowledgement alone turns nothing off
  expect(parseAuthConfig({ SVC_AUTH_ISSUER: ISSUER, ...ACK })).toMatchObject({ disabled: false, issuer: ISSUER });
});

test("SVC_AUTH_DISABLED accepts only true/false", () => {
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_DISABLED: "yes" })).toBe("SVC_AUTH_DISABLED");
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_DISABLED: "1" })).toBe("SVC_AUTH_DISABLED");
});

test("none and every HS* algorithm are refused, as are unknown names", () => {
  for (const algs of ["none", "RS256,none", "HS256", "RS256,HS512", "hs384", "XX999"]) {
    expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_ALGORITHMS: algs })).toBe("SVC_AUTH_ALGORITHMS");
  }
});

test("bad numbers name their field", () => {
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_CLOCK_TOLERANCE_SECONDS: "301" })).toBe(
    "SVC_AUTH_CLOCK_TOLERANCE_SECONDS",
  );
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_CLOCK_TOLERANCE_SECONDS: "-1" })).toBe(
    "SVC_AUTH_CLOCK_TOLERANCE_SECONDS",
  );
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_JWKS_COOLDOWN_SECONDS: "0" })).toBe(
    "SVC_AUTH_JWKS_COOLDOWN_SECONDS",
  );
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_CACHE_MAX_ENTRIES: "many" })).toBe("SVC_AUTH_CACHE_MAX_ENTRIES");
});

test("a malformed issuer or audience list names its field", () => {
  expect(fieldOf({ SVC_AUTH_ISSUER: "keycloak/realms/svc" })).toBe("SVC_AUTH_ISSUER");
  expect(fieldOf({ SVC_AUTH_ISSUER: ISSUER, SVC_AUTH_ALLOWED_AUDIENCES: "a,,b" })).toBe("SVC_AUTH_ALLOWED_AUDIENCES");
});

test("values are trimmed, and an empty or blank value counts as unset (the default applies)", () => {
  expect(
    parseAuthConfig({
      SVC_AUTH_ISSUER: `  ${ISSUER}\t`,
      SVC_AUTH_ALLOWED_AUDIENCES: " svc-cli , svc-sdk ",
      SVC_AUTH_ALGORITHMS: "   ",
      SVC_AUTH_CLOCK_TOLERANCE_SECONDS: " ",
      SVC_AUTH_JWKS_COOLDOWN_SECONDS: "",
      SVC_AUTH_CACHE_MAX_ENTRIES: " 5 ",
      SVC_AUTH_DISABLED: "\t",
      SVC_AUTH_DISABLED_ACKNOWLEDGE: " ",
    }),
  ).toEqual({
    disabled: false,
    issuer: ISSUER,
    allowedAudiences: ["svc-cli", "svc-sdk"],
    algorithms: ["RS256", "PS256", "ES256"],
    clockToleranceSeconds: 30,
    jwksCooldownSeconds: 30,
    cacheMaxEntries: 5,
  });
  expect(fieldOf({ SVC_AUTH_ISSUER: "  " })).toBe("SVC_AUTH_ISSUER");
});
