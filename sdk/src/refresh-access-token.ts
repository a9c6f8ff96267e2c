import { isLoopbackHost } from "./address.ts";
import { SdkError } from "./errors.ts";

export interface RefreshRequest {
  tokenEndpoint: string;
  clientId: string;
  refreshToken: string;
  timeoutMs?: number;
}

export interface RefreshedTokens {
  accessToken: string;
  /** The IdP may rotate the refresh token; when it does not send one, the old one stays in use. */
  refreshToken: string;
}

/**
 * OAuth 2.0 `refresh_token` grant (RFC 6749 §6) against the IdP's token endpoint, form-encoded. A loopback
 * plain-HTTP IdP gets `X-Forwarded-Proto: https`, as the spec's local helper does (Keycloak otherwise answers
 * "HTTPS required" unless the realm allows HTTP).
 *
 * Not `refreshToken` from `@svc/token` on purpose: that one takes a Keycloak base URL + realm (the SDK takes any
 * token endpoint URL), checks the realm roles of the seeded operator users (`@svc/idp-seed`) and throws
 * TokenError; the SDK keeps the operators' CLI out of its runtime dependencies and throws SdkError codes.
 */
export async function refreshAccessToken(request: RefreshRequest): Promise<RefreshedTokens> {
  const url = new URL(request.tokenEndpoint);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) headers["x-forwarded-proto"] = "https";
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body: new URLSearchParams({
        grant_type: "refresh_token",
        client_id: request.clientId,
        refresh_token: request.refreshToken,
      }),
      signal: AbortSignal.timeout(request.timeoutMs ?? 10_000),
    });
  } catch (cause) {
    throw new SdkError(
      "SDK_REFRESH_FAILED",
      `token refresh at ${url.origin}${url.pathname} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { subject: "idp" },
      { cause },
    );
  }
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok || typeof body.access_token !== "string") {
    const reason =
      typeof body.error === "string"
        ? `${body.error}${typeof body.error_description === "string" ? ` (${body.error_description})` : ""}`
        : text.slice(0, 200);
    throw new SdkError(
      "SDK_REFRESH_FAILED",
      `token refresh at ${url.origin}${url.pathname} failed: HTTP ${response.status} ${reason}; ` +
        "obtain a new refresh token (scope offline_access) and restart the client",
      { subject: "refresh_token" },
    );
  }
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : request.refreshToken,
  };
}
