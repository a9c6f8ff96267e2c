import { TokenError } from "./errors.ts";
import { wantsForwardedProto } from "./forwarded-proto.ts";
import { mapIdpError } from "./map-idp-error.ts";
import type { TokenSet } from "./token-set.ts";

export interface IdpClientOptions {
  /** Keycloak base URL, e.g. `http://127.0.0.1:8082`. */
  url: string;
  realm: string;
  clientId: string;
  /**
   * Send `X-Forwarded-Proto: https` on plain HTTP to the local host (default true; see `wantsForwardedProto`).
   * False never sends it.
   */
  forwardedProto?: boolean;
}

/** One call to the realm's OpenID Connect token endpoint; an error answer becomes a coded TokenError. */
export async function tokenRequest(options: IdpClientOptions, fields: Record<string, string>): Promise<TokenSet> {
  const url = `${options.url.replace(/\/+$/, "")}/realms/${encodeURIComponent(options.realm)}/protocol/openid-connect/token`;
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (options.forwardedProto !== false && wantsForwardedProto(options.url)) headers["x-forwarded-proto"] = "https";
  const grantType = fields.grant_type ?? "";
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body: new URLSearchParams({ client_id: options.clientId, ...fields }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new TokenError(
      "IDP_UNREACHABLE",
      `cannot reach the IdP at ${options.url}: ${String(error)}`,
      {},
      {
        cause: error,
      },
    );
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof body.access_token !== "string") throw mapIdpError(response.status, body, grantType);
  const now = Math.floor(Date.now() / 1000);
  const seconds = (value: unknown) => (typeof value === "number" && value > 0 ? now + value : undefined);
  return {
    access_token: body.access_token,
    ...(typeof body.refresh_token === "string" && { refresh_token: body.refresh_token }),
    expires_at: seconds(body.expires_in) ?? now,
    ...(seconds(body.refresh_expires_in) !== undefined && { refresh_expires_at: seconds(body.refresh_expires_in) }),
    ...(typeof body.scope === "string" && { scope: body.scope }),
  };
}
