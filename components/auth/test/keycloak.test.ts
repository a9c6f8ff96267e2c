/**
 * Against the REAL Keycloak of the stack: a realm of its own (random name, deleted after), public client `svc-cli`
 * with an audience mapper and `tenant_id` / `principal_id` attribute mappers, the attributes declared in the user
 * profile, a realm role and the `audit:read` client scope; a password grant; the core verifies the result.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomName, realmUserName, stackEnv } from "@svc/testkit";
import { type AuthCore, type AuthError, createAuthCore } from "../index.ts";
import { captureLogger } from "./support/test-issuer.ts";

const { idp } = stackEnv();
const realm = randomName("auth-realm");
const clientId = "svc-cli";
const username = realmUserName("auth");
const password = randomName("pw");
const tenantId = randomName("tenant");
const principalId = randomName("principal");
let adminToken = "";
let realmCreated = false;
let core: AuthCore;

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${idp.url}/admin/realms${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function tokenCall(realmName: string, form: Record<string, string>) {
  const response = await fetch(`${idp.url}/realms/${realmName}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const attributeMapper = (name: string) => ({
  name,
  protocol: "openid-connect",
  protocolMapper: "oidc-usermodel-attribute-mapper",
  config: {
    "user.attribute": name,
    "claim.name": name,
    "jsonType.label": "String",
    "access.token.claim": "true",
    "id.token.claim": "true",
    "userinfo.token.claim": "true",
  },
});

beforeAll(async () => {
  const bootstrap = await tokenCall("master", {
    grant_type: "password",
    client_id: "admin-cli",
    username: idp.adminUser,
    password: idp.adminPassword,
  });
  expect(bootstrap.status).toBe(200);
  adminToken = String(bootstrap.body.access_token);

  await admin("POST", "", { realm, enabled: true });
  realmCreated = true;

  // declare the custom attributes in the user profile (unmanaged attributes are off by default)
  const profile = (await (await admin("GET", `/${realm}/users/profile`)).json()) as { attributes: unknown[] };
  for (const name of ["tenant_id", "principal_id"]) {
    profile.attributes.push({
      name,
      displayName: name,
      permissions: { view: ["admin"], edit: ["admin"] },
      multivalued: false,
    });
  }
  await admin("PUT", `/${realm}/users/profile`, profile);

  await admin("POST", `/${realm}/roles`, { name: "security" });
  await admin("POST", `/${realm}/client-scopes`, {
    name: "audit:read",
    protocol: "openid-connect",
    attributes: { "include.in.token.scope": "true", "display.on.consent.screen": "false" },
  });
  await admin("POST", `/${realm}/clients`, {
    clientId,
    publicClient: true,
    directAccessGrantsEnabled: true,
    standardFlowEnabled: false,
    // listing scopes replaces the realm defaults, so name them all: `roles` carries realm_access, `basic` the sub
    defaultClientScopes: ["basic", "roles", "profile", "email", "web-origins", "acr"],
    optionalClientScopes: ["audit:read", "offline_access"],
    protocolMappers: [
      {
        name: "svc-cli-audience",
        protocol: "openid-connect",
        protocolMapper: "oidc-audience-mapper",
        config: { "included.client.audience": clientId, "access.token.claim": "true", "id.token.claim": "false" },
      },
      attributeMapper("tenant_id"),
      attributeMapper("principal_id"),
    ],
  });

  const created = await admin("POST", `/${realm}/users`, {
    username,
    enabled: true,
    email: `${username}@example.test`,
    emailVerified: true,
    firstName: "Auth",
    lastName: "Test",
    requiredActions: [],
    attributes: { tenant_id: [tenantId], principal_id: [principalId] },
    credentials: [{ type: "password", value: password, temporary: false }],
  });
  const userId = String(created.headers.get("location")).split("/").at(-1);
  const role = (await (await admin("GET", `/${realm}/roles/security`)).json()) as { id: string; name: string };
  await admin("POST", `/${realm}/users/${userId}/role-mappings/realm`, [{ id: role.id, name: role.name }]);

  core = createAuthCore({
    config: {
      disabled: false,
      issuer: `${idp.url}/realms/${realm}`,
      allowedAudiences: [clientId],
      algorithms: ["RS256", "PS256", "ES256"],
      clockToleranceSeconds: 30,
      jwksCooldownSeconds: 30,
      cacheMaxEntries: 100,
    },
    ...captureLogger(),
  });
});

afterAll(async () => {
  if (realmCreated) await admin("DELETE", `/${realm}`);
});

async function passwordGrant(scope: string) {
  const token = await tokenCall(realm, { grant_type: "password", client_id: clientId, username, password, scope });
  expect(token.status).toBe(200);
  return token.body;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("accepted");
    },
    (error: unknown) => error as AuthError,
  );

test("a Keycloak access token verifies; caller has the user's tenant, principal, realm role and scope", async () => {
  const body = await passwordGrant("openid audit:read");
  const caller = await core.check({ authorization: `Bearer ${String(body.access_token)}`, tenantId }, "audit.list");
  expect(caller.kind).toBe("token");
  expect(caller.tenantId).toBe(tenantId);
  expect(caller.principalId).toBe(principalId);
  expect(caller.roles).toContain("security");
  expect(caller.scopes).toContain("audit:read");
  expect(caller.subject).toBeString();
  expect(caller.tokenExpiresAt?.getTime()).toBeGreaterThan(Date.now());
  expect(core.stats()).toMatchObject({ discoveryFetches: 1, jwksFetches: 1 });
});

test("without the audit:read scope the same user may not list audit events", async () => {
  const body = await passwordGrant("openid");
  const error = await refusal(
    core.check({ authorization: `Bearer ${String(body.access_token)}`, tenantId }, "audit.list"),
  );
  expect(error.code).toBe("AUTH_PERMISSION_DENIED");
});

test("Keycloak's ID token and refresh token are not accepted as access tokens", async () => {
  const body = await passwordGrant("openid");
  const idError = await refusal(core.authenticate({ authorization: `Bearer ${String(body.id_token)}`, tenantId }));
  expect(idError.code).toBe("AUTH_WRONG_TOKEN_TYPE");
  const refreshError = await refusal(
    core.authenticate({ authorization: `Bearer ${String(body.refresh_token)}`, tenantId }),
  );
  // Keycloak signs refresh tokens with the realm's HMAC key (HS512): refused on alg before anything else
  // (a refresh token signed asymmetrically would be refused as AUTH_WRONG_TOKEN_TYPE: see verify-access-token.test)
  expect(refreshError.code).toBe("AUTH_ALG_NOT_ALLOWED");
});

test("another tenant in x-tenant-id is refused", async () => {
  const body = await passwordGrant("openid");
  const error = await refusal(
    core.authenticate({ authorization: `Bearer ${String(body.access_token)}`, tenantId: "someone-else" }),
  );
  expect(error.code).toBe("AUTH_TENANT_MISMATCH");
});
