import { decodeProtectedHeader, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { AUTHORIZATION_HEADER, MAX_BEARER_TOKEN_LENGTH } from "./auth-headers.ts";
import { type Caller, freezeCaller } from "./caller.ts";
import { AuthError } from "./errors.ts";

export interface VerifyOptions {
  issuer: string;
  allowedAudiences: readonly string[];
  algorithms: readonly string[];
  clockToleranceSeconds: number;
  getKey: JWTVerifyGetKey;
  /** Epoch ms; injected so tests can move the clock. */
  now?: () => number;
}

/** Header `typ` values an access token may carry (absent is fine too): plain JWT or RFC 9068 `at+jwt`. */
const ACCESS_HEADER_TYPES = new Set(["jwt", "at+jwt", "application/at+jwt", "application/jwt"]);
/** Keycloak's payload `typ` of an access token; ID tokens say `ID`, refresh tokens `Refresh` / `Offline`. */
const ACCESS_PAYLOAD_TYPE = "bearer";

function mapJoseError(error: unknown): AuthError {
  if (error instanceof AuthError) return error;
  if (error instanceof errors.JWTExpired)
    return new AuthError("AUTH_TOKEN_EXPIRED", "token expired", { subject: "exp" });
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") {
      return new AuthError("AUTH_CLAIM_MISSING", `token lacks the ${error.claim} claim`, { subject: error.claim });
    }
    if (error.claim === "nbf") {
      return new AuthError("AUTH_TOKEN_NOT_YET_VALID", "token not yet valid (nbf)", { subject: "nbf" });
    }
    if (error.claim === "iss") return new AuthError("AUTH_ISSUER_MISMATCH", "issuer mismatch", { subject: "iss" });
    return new AuthError("AUTH_TOKEN_MALFORMED", `claim ${error.claim} invalid: ${error.message}`, {
      subject: error.claim,
    });
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return new AuthError("AUTH_ALG_NOT_ALLOWED", "alg not allowed");
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new AuthError("AUTH_SIGNATURE_INVALID", "signature verification failed");
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new AuthError("AUTH_UNKNOWN_KEY", "no single key in the issuer's JWKS matches the token", {
      subject: "kid",
    });
  }
  if (error instanceof errors.JOSENotSupported) return new AuthError("AUTH_ALG_NOT_ALLOWED", error.message);
  if (error instanceof errors.JOSEError)
    return new AuthError("AUTH_TOKEN_MALFORMED", `malformed token (${error.code})`);
  return new AuthError("AUTH_TOKEN_MALFORMED", "token could not be verified", { cause: error });
}

function stringClaim(payload: JWTPayload, name: string): string {
  const value = payload[name];
  if (typeof value !== "string" || value === "") {
    throw new AuthError("AUTH_CLAIM_MISSING", `token lacks the ${name} claim`, { subject: name });
  }
  return value;
}

function realmRoles(payload: JWTPayload): string[] {
  const access = payload.realm_access as { roles?: unknown } | undefined;
  const roles = access && typeof access === "object" ? access.roles : undefined;
  return Array.isArray(roles) ? roles.filter((role): role is string => typeof role === "string") : [];
}

/**
 * Verifies a bearer access token: asymmetric `alg` from the allow-list only, no `crit` extension, a `kid`, signature
 * against the issuer's JWKS (never a key the token carries or points at: `jwk`, `jku`, `x5u`, `x5c` are ignored),
 * exact `iss`, `exp`/`nbf`/`iat` with clock tolerance, audience ∩ allowed audiences, access-token type (not an ID
 * or refresh token), and the `tenant_id` / `principal_id` claims. Every refusal is an `AuthError` with a stable
 * code; the caller returned is deep-frozen. A token over `MAX_BEARER_TOKEN_LENGTH` is refused before decoding.
 */
export async function verifyAccessToken(token: string, options: VerifyOptions): Promise<Caller> {
  if (token.length > MAX_BEARER_TOKEN_LENGTH) {
    throw new AuthError("AUTH_TOKEN_TOO_LARGE", `bearer token longer than ${MAX_BEARER_TOKEN_LENGTH} characters`, {
      subject: AUTHORIZATION_HEADER,
    });
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new AuthError("AUTH_TOKEN_MALFORMED", "token is not a compact JWS");
  }
  if (token.split(".").length !== 3) throw new AuthError("AUTH_TOKEN_MALFORMED", "token is not a compact JWS");
  if (typeof header.alg !== "string" || !options.algorithms.includes(header.alg)) {
    throw new AuthError("AUTH_ALG_NOT_ALLOWED", `alg ${JSON.stringify(String(header.alg).slice(0, 16))} not allowed`, {
      subject: "alg",
    });
  }
  // RFC 7515 §4.1.11: a recipient must refuse a JWS whose `crit` lists an extension it does not understand; we
  // understand none (not even RFC 7797 `b64`, which jose would honour), so any `crit` makes the token malformed.
  if (header.crit !== undefined) {
    throw new AuthError("AUTH_TOKEN_MALFORMED", "token header has a crit parameter (no JWS extension is supported)", {
      subject: "crit",
    });
  }
  // Keycloak always sets kid. Without it jose would try every key of a matching type: a token that verifies while
  // the IdP publishes one key would fail once a rotation publishes a second, and every such token would cost a
  // JWKS refetch attempt. Refused before any key is looked up.
  if (typeof header.kid !== "string" || header.kid === "") {
    throw new AuthError("AUTH_TOKEN_MALFORMED", "token header has no kid", { subject: "kid" });
  }
  if (header.typ !== undefined && !ACCESS_HEADER_TYPES.has(String(header.typ).toLowerCase())) {
    throw new AuthError("AUTH_WRONG_TOKEN_TYPE", "not an access token (header typ)", { subject: "typ" });
  }

  const now = (options.now ?? Date.now)();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, options.getKey, {
      issuer: options.issuer,
      algorithms: [...options.algorithms],
      clockTolerance: options.clockToleranceSeconds,
      currentDate: new Date(now),
      requiredClaims: ["exp"],
    }));
  } catch (error) {
    throw mapJoseError(error);
  }
  // jose checks iat only against maxTokenAge; a token "issued" in the future is as invalid as one with a future nbf
  if (typeof payload.iat === "number" && payload.iat > now / 1000 + options.clockToleranceSeconds) {
    throw new AuthError("AUTH_TOKEN_NOT_YET_VALID", "token issued in the future (iat)", { subject: "iat" });
  }

  const headerTyp = String(header.typ ?? "").toLowerCase();
  const isRfc9068 = headerTyp === "at+jwt" || headerTyp === "application/at+jwt";
  const payloadTyp = typeof payload.typ === "string" ? payload.typ.toLowerCase() : undefined;
  if (payloadTyp !== ACCESS_PAYLOAD_TYPE && !(isRfc9068 && payloadTyp === undefined)) {
    throw new AuthError("AUTH_WRONG_TOKEN_TYPE", `not an access token (typ ${JSON.stringify(payload.typ ?? null)})`, {
      subject: "typ",
    });
  }

  const audiences = typeof payload.aud === "string" ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  if (!audiences.some((aud) => options.allowedAudiences.includes(aud))) {
    throw new AuthError("AUTH_AUDIENCE_MISMATCH", "audience mismatch", { subject: "aud" });
  }

  const tenantId = stringClaim(payload, "tenant_id");
  const principalId = stringClaim(payload, "principal_id");
  const scope = typeof payload.scope === "string" ? payload.scope : "";
  return freezeCaller({
    kind: "token",
    principalId,
    tenantId,
    roles: realmRoles(payload),
    scopes: scope.split(/\s+/).filter(Boolean),
    subject: typeof payload.sub === "string" ? payload.sub : undefined,
    tokenExpiresAt: new Date((payload.exp ?? 0) * 1000),
  });
}
