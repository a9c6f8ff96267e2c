import { AuthError } from "./errors.ts";

/**
 * The two request headers auth reads, validated once for both transports. An adapter hands over what its transport
 * gives: the HTTP header value (a repeated header arrives joined with ", ") or every gRPC metadata value (a list).
 * A header present more than once is refused, never reduced to its first value.
 */
export type HeaderValue = string | readonly string[] | null | undefined;

export const AUTHORIZATION_HEADER = "authorization";
export const TENANT_HEADER = "x-tenant-id";

/**
 * Longest bearer token accepted, in characters (8 KiB; a compact JWS is ASCII, so also bytes). Keycloak access
 * tokens are 1–3 KiB; a longer token is refused with `AUTH_TOKEN_TOO_LARGE` before it is hashed, decoded or verified.
 */
export const MAX_BEARER_TOKEN_LENGTH = 8192;
/** Longest `authorization` value looked at, before trimming or parsing: the token plus room for `Bearer `. */
const MAX_AUTHORIZATION_LENGTH = MAX_BEARER_TOKEN_LENGTH + 64;

const valuesOf = (value: HeaderValue): readonly string[] =>
  value === null || value === undefined ? [] : typeof value === "string" ? [value] : value;

/**
 * The bearer token of an `authorization` value. In order: any value longer than the limit → `AUTH_TOKEN_TOO_LARGE`;
 * more than one value, or a comma (how HTTP joins a repeated header) → `AUTH_TOKEN_MALFORMED`; absent or blank →
 * `AUTH_TOKEN_MISSING`; not `Bearer <token>` → `AUTH_TOKEN_MALFORMED`; token longer than
 * `MAX_BEARER_TOKEN_LENGTH` → `AUTH_TOKEN_TOO_LARGE`. Every refusal names `authorization`.
 */
export function bearerToken(authorization: HeaderValue): string {
  const subject = AUTHORIZATION_HEADER;
  const values = valuesOf(authorization);
  const tooLarge = () =>
    new AuthError("AUTH_TOKEN_TOO_LARGE", `bearer token longer than ${MAX_BEARER_TOKEN_LENGTH} characters`, {
      subject,
    });
  if (values.some((value) => value.length > MAX_AUTHORIZATION_LENGTH)) throw tooLarge();
  if (values.length > 1) {
    throw new AuthError("AUTH_TOKEN_MALFORMED", `authorization header sent ${values.length} times`, { subject });
  }
  const value = values[0]?.trim();
  if (!value) throw new AuthError("AUTH_TOKEN_MISSING", "no bearer token (authorization header missing)", { subject });
  if (value.includes(",")) {
    throw new AuthError("AUTH_TOKEN_MALFORMED", "authorization header repeated (comma-joined values)", { subject });
  }
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  if (!match?.[1])
    throw new AuthError("AUTH_TOKEN_MALFORMED", "authorization header is not `Bearer <token>`", { subject });
  if (match[1].length > MAX_BEARER_TOKEN_LENGTH) throw tooLarge();
  return match[1];
}

/**
 * What a tenant id may not contain: any Unicode whitespace (`\s` and `\p{Z}`, which include U+00A0 and the other
 * spaces `String.prototype.trim` strips), control (`\p{Cc}`) or invisible format characters (`\p{Cf}`, e.g. U+200B,
 * U+FEFF), and the comma HTTP joins a repeated header with.
 */
const NOT_IN_TENANT = /[\s\p{Z}\p{Cc}\p{Cf},]/u;

/**
 * The `x-tenant-id` value exactly as received (never trimmed). Absent or empty → `AUTH_TENANT_HEADER_MISSING`;
 * repeated, or with a character of `NOT_IN_TENANT` → `AUTH_TENANT_HEADER_INVALID`. Both name `x-tenant-id`.
 */
export function tenantHeader(value: HeaderValue): string {
  const subject = TENANT_HEADER;
  const values = valuesOf(value);
  if (values.length > 1) {
    throw new AuthError("AUTH_TENANT_HEADER_INVALID", `${TENANT_HEADER} header sent ${values.length} times`, {
      subject,
    });
  }
  const tenant = values[0];
  if (tenant === undefined || tenant === "") {
    throw new AuthError("AUTH_TENANT_HEADER_MISSING", `${TENANT_HEADER} header missing`, { subject });
  }
  const bad = NOT_IN_TENANT.exec(tenant);
  if (bad) {
    const codePoint = `U+${(bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    throw new AuthError(
      "AUTH_TENANT_HEADER_INVALID",
      `${TENANT_HEADER} holds ${codePoint} at index ${bad.index} (whitespace, control, invisible characters and ` +
        "commas are refused; the value is compared exactly as received)",
      { subject },
    );
  }
  return tenant;
}
