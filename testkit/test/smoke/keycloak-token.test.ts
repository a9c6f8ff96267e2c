import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomName, realmUserName, stackEnv } from "@svc/testkit";
import { createRemoteJWKSet, jwtVerify } from "jose";

const { idp } = stackEnv();
const realm = randomName("smoke-realm");
const clientId = "smoke-cli";
let adminToken = "";

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${idp.url}/admin/realms${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function passwordGrant(realmName: string, client: string, username: string, password: string) {
  const response = await fetch(`${idp.url}/realms/${realmName}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", client_id: client, username, password, scope: "openid" }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const bootstrap = await passwordGrant("master", "admin-cli", idp.adminUser, idp.adminPassword);
  expect(bootstrap.status).toBe(200);
  adminToken = String(bootstrap.body.access_token);
  await admin("POST", "", { realm, enabled: true });
  await admin("POST", `/${realm}/clients`, {
    clientId,
    publicClient: true,
    directAccessGrantsEnabled: true,
    standardFlowEnabled: false,
  });
}, 60_000);

afterAll(async () => {
  if (adminToken) await admin("DELETE", `/${realm}`);
});

test("a user made by the test gets an access token that verifies against the realm's JWKS", async () => {
  const username = realmUserName("smoke");
  const password = randomName("pw");
  await admin("POST", `/${realm}/users`, {
    username,
    enabled: true,
    email: `${username}@example.test`,
    emailVerified: true,
    firstName: "Smoke",
    lastName: "Test",
    requiredActions: [],
    credentials: [{ type: "password", value: password, temporary: false }],
  });

  const token = await passwordGrant(realm, clientId, username, password);
  expect(token.status).toBe(200);
  const issuer = `${idp.url}/realms/${realm}`;
  const jwks = createRemoteJWKSet(new URL(`${issuer}/protocol/openid-connect/certs`));
  const { payload, protectedHeader } = await jwtVerify(String(token.body.access_token), jwks, {
    issuer,
    algorithms: ["RS256"],
  });
  expect(protectedHeader.alg).toBe("RS256");
  expect(payload.preferred_username).toBe(username);
  expect(payload.azp).toBe(clientId);
  expect(payload.typ).toBe("Bearer");
});
