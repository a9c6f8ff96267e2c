import { hangUpListener } from "@svc/testkit";
import { mint, startTestIssuer } from "./test-issuer.ts";

/** How the stand-in's token endpoint answers. */
export type TokenMode = "ok" | "unavailable" | "reject" | "no-tenant" | "not-json";

/**
 * An IdP stand-in on 127.0.0.1:0 for the failures the real Keycloak of the stack cannot be made to produce on
 * demand (a 503 token endpoint, a token without `tenant_id`, a broken response, an outage between two renewals):
 * the test issuer's discovery and JWKS plus a client-credentials token endpoint whose answer the test switches,
 * counting requests.
 */
export async function startStandInTokenIdp() {
  let mode: TokenMode = "ok";
  let expiresIn = 300;
  let issued = 0;
  const lastForm: { value?: URLSearchParams } = {};
  const issuer = await startTestIssuer({
    async token(request) {
      counts.token++;
      lastForm.value = new URLSearchParams(await request.text());
      if (mode === "unavailable") return new Response("down", { status: 503 });
      if (mode === "reject") {
        return Response.json(
          { error: "unauthorized_client", error_description: "Invalid client or Invalid client credentials" },
          { status: 401 },
        );
      }
      if (mode === "not-json") return new Response("<html>", { status: 200 });
      issued++;
      // shaped like the seeded svc-components client's tokens (see ops/idp-seed)
      const accessToken = await mint(issuer, {
        ttlSeconds: expiresIn,
        claims: {
          n: issued,
          aud: ["svc-cli"],
          azp: lastForm.value.get("client_id"),
          principal_id: "svc-components",
          tenant_id: mode === "no-tenant" ? undefined : "svc-internal",
          realm_access: { roles: ["component"] },
          scope: "profile email",
        },
      });
      return Response.json({ access_token: accessToken, expires_in: expiresIn, token_type: "Bearer" });
    },
  });
  // the issuer counts discovery and JWKS requests; token requests are counted beside them
  const counts = Object.assign(issuer.counts, { token: 0 });
  return {
    issuer: issuer.issuer,
    counts,
    /** The form of the last token request (grant type, client id and secret sent). */
    lastForm,
    setMode(next: TokenMode) {
      mode = next;
    },
    setExpiresIn(seconds: number) {
      expiresIn = seconds;
    },
    stop: issuer.stop,
  };
}

export type StandInTokenIdp = Awaited<ReturnType<typeof startStandInTokenIdp>>;

const hangUps: Array<{ stop(): void }> = [];

/** An issuer URL where nothing answers HTTP (testkit's hang-up listener); `stopUnreachableIssuers()` in afterAll. */
export function unreachableIssuer(): string {
  const listener = hangUpListener();
  hangUps.push(listener);
  return `${listener.url}/realms/nowhere`;
}

export function stopUnreachableIssuers(): void {
  for (const listener of hangUps.splice(0)) listener.stop();
}
