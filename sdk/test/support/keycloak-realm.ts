import { randomName, realmUserName, stackEnv } from "@svc/testkit";

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

/** A random realm on the stack's Keycloak with a public client `svc-cli` and one user (deleted by `remove`). */
export async function createTestRealm(accessTokenLifespanSeconds: number): Promise<TestRealm> {
  const { idp } = stackEnv();
  const realm = randomName("sdk-realm");
  const clientId = "svc-cli";
  const adminResponse = await form(`${idp.url}/realms/master/protocol/openid-connect/token`, {
    grant_type: "password",
    client_id: "admin-cli",
    username: idp.adminUser,
    password: idp.adminPassword,
  });
  if (!adminResponse.ok) throw new Error(`admin token: ${adminResponse.status} ${await adminResponse.text()}`);
  const adminToken = String(((await adminResponse.json()) as Record<string, unknown>).access_token);
  async function admin(method: string, path: string, body?: unknown): Promise<void> {
    const response = await fetch(`${idp.url}/admin/realms${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }
  await admin("POST", "", { realm, enabled: true, accessTokenLifespan: accessTokenLifespanSeconds });
  await admin("POST", `/${realm}/clients`, {
    clientId,
    publicClient: true,
    directAccessGrantsEnabled: true,
    standardFlowEnabled: false,
  });
  const username = realmUserName("sdk");
  const password = randomName("pw");
  await admin("POST", `/${realm}/users`, {
    username,
    enabled: true,
    email: `${username}@example.test`,
    emailVerified: true,
    firstName: "Sdk",
    lastName: "Test",
    requiredActions: [],
    credentials: [{ type: "password", value: password, temporary: false }],
  });
  const base = `${idp.url}/realms/${realm}/protocol/openid-connect`;
  return {
    realm,
    idpUrl: idp.url,
    tokenEndpoint: `${base}/token`,
    clientId,
    async issueTokens() {
      const response = await form(`${base}/token`, {
        grant_type: "password",
        client_id: clientId,
        username,
        password,
        scope: "openid offline_access",
      });
      const body = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`password grant: ${response.status} ${JSON.stringify(body)}`);
      return { accessToken: String(body.access_token), refreshToken: String(body.refresh_token) };
    },
    async revoke(refreshToken) {
      const response = await form(`${base}/revoke`, {
        client_id: clientId,
        token: refreshToken,
        token_type_hint: "refresh_token",
      });
      if (!response.ok) throw new Error(`revoke: ${response.status} ${await response.text()}`);
    },
    remove: () => admin("DELETE", `/${realm}`),
  };
}
