import { IdpSeedError } from "./errors.ts";

export interface PasswordProbe {
  url: string;
  realm: string;
  clientId: string;
  username: string;
  password: string;
}

/**
 * Whether the IdP accepts the password (a password grant on the CLI client). Keycloak cannot read passwords back,
 * so this is how the seed decides whether to reset one; the probe's session is logged out again.
 */
export async function passwordWorks(probe: PasswordProbe): Promise<boolean> {
  const endpoint = `${probe.url}/realms/${encodeURIComponent(probe.realm)}/protocol/openid-connect`;
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
    signal: AbortSignal.timeout(30_000),
  });
  let response: Response;
  try {
    response = await fetch(
      `${endpoint}/token`,
      form({
        grant_type: "password",
        client_id: probe.clientId,
        username: probe.username,
        password: probe.password,
        scope: "openid",
      }),
    );
  } catch (error) {
    throw new IdpSeedError("IDP_UNREACHABLE", `cannot reach the IdP at ${probe.url}: ${String(error)}`, {
      subject: probe.url,
    });
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) return false;
  if (typeof body.refresh_token === "string") {
    await fetch(`${endpoint}/logout`, form({ client_id: probe.clientId, refresh_token: body.refresh_token })).catch(
      () => undefined,
    );
  }
  return true;
}
