import { seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
}

export interface TestRealm {
  realm: string;
  idpUrl: string;
  tokenEndpoint: string;
  clientId: string;
  /** Password grant for the realm's test user, scope `openid offline_access`. */
  issueTokens(): Promise<IssuedTokens>;
  /** Revokes a refresh token (RFC 7009) so the IdP refuses it afterwards. */
  revoke(refreshToken: string): Promise<void>;
  remove(): Promise<void>;
}

async function form(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
}

/**
 * A realm of the test's own, seeded as `ops/dev up` seeds `svc` (deleted by `remove`), with a short access token
 * lifespan so renewal happens within a test; tokens are the seeded `app` user's.
 */
export async function createTestRealm(accessTokenLifespanSeconds: number): Promise<TestRealm> {
  const seeded = await seedTestRealm("sdk-realm");
  const { url, realm, clientId, userPassword } = seeded.seed;
  await seeded.admin.put(`/${realm}`, { accessTokenLifespan: accessTokenLifespanSeconds });
  const base = `${url}/realms/${realm}/protocol/openid-connect`;
  return {
    realm,
    idpUrl: url,
    tokenEndpoint: `${base}/token`,
    clientId,
    async issueTokens() {
      const set = await issueToken(
        { url, realm, clientId },
        { user: "app", password: userPassword, scope: "offline_access" },
      );
      if (!set.refresh_token) throw new Error("no refresh token for offline_access");
      return { accessToken: set.access_token, refreshToken: set.refresh_token };
    },
    async revoke(refreshToken) {
      const response = await form(`${base}/revoke`, {
        client_id: clientId,
        token: refreshToken,
        token_type_hint: "refresh_token",
      });
      if (!response.ok) throw new Error(`revoke: ${response.status} ${await response.text()}`);
    },
    remove: () => seeded.remove(),
  };
}
