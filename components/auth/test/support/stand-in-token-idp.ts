import { hangUpListener } from "@svc/testkit";
import { SignJWT } from "jose";
import { newKey } from "./test-issuer.ts";

/** How the stand-in's token endpoint answers. */
export type TokenMode = "ok" | "unavailable" | "reject" | "no-tenant" | "not-json";

/**
 * An IdP stand-in on 127.0.0.1:0 for the failures the real Keycloak of the stack cannot be made to produce on
 * demand (a 503 token endpoint, a token without `tenant_id`, a broken response, an outage between two renewals):
 * OIDC discovery and a client-credentials token endpoint whose answer the test switches, counting requests.
 */
export async function startStandInTokenIdp() {
  const key = await newKey("stand-in");
  const counts = { discovery: 0, token: 0 };
  let mode: TokenMode = "ok";
  let expiresIn = 300;
  let issued = 0;
  const lastForm: { value?: URLSearchParams } = {};
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (pathname === "/realms/test/.well-known/openid-configuration") {
        counts.discovery++;
        return Response.json({
          issuer: idp.issuer,
          jwks_uri: `${idp.issuer}/protocol/openid-connect/certs`,
          token_endpoint: `${idp.issuer}/protocol/openid-connect/token`,
        });
      }
      if (pathname === "/realms/test/protocol/openid-connect/certs") {
        return Response.json({ keys: [key.publicJwk] });
      }
      if (pathname === "/realms/test/protocol/openid-connect/token" && request.method === "POST") {
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
        const claims: Record<string, unknown> = {
          n: issued,
          iss: idp.issuer,
          aud: ["svc-cli"],
          typ: "Bearer",
          azp: lastForm.value.get("client_id"),
          principal_id: "svc-components",
          realm_access: { roles: ["component"] },
          scope: "profile email",
        };
        if (mode !== "no-tenant") claims.tenant_id = "svc-internal";
        const accessToken = await new SignJWT(claims)
          .setProtectedHeader({ alg: key.alg, kid: key.kid })
          .setIssuedAt()
          .setExpirationTime(`${expiresIn}s`)
          .sign(key.privateKey);
        return Response.json({ access_token: accessToken, expires_in: expiresIn, token_type: "Bearer" });
      }
      return new Response("not found", { status: 404 });
    },
  });
  const idp = {
    issuer: `http://127.0.0.1:${server.port}/realms/test`,
    counts,
    /** The form of the last token request (grant type, client id and secret sent). */
    lastForm,
    setMode(next: TokenMode) {
      mode = next;
    },
    setExpiresIn(seconds: number) {
      expiresIn = seconds;
    },
    stop: () => server.stop(true),
  };
  return idp;
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
