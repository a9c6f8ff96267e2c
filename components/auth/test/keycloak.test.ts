/**
 * Against the REAL Keycloak of the stack: a realm of its own, seeded exactly as `ops/dev up` seeds `svc`
 * (deleted after); tokens come from the token helper; the core verifies them and applies the policy table.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rejectionOf, type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import {
  AuthConfigError,
  type AuthCore,
  AuthError,
  createAuthCore,
  type Operation,
  parseAuthConfig,
} from "../index.ts";
import { captureLogger } from "./support/test-issuer.ts";

let realm: SeededRealm;
let core: AuthCore;

beforeAll(async () => {
  realm = await seedTestRealm("auth");
  core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: realm.issuer }), ...captureLogger() });
  await core.start(); // the start-up check against the real discovery document
}, 60_000);

afterAll(async () => {
  await realm?.remove();
});

async function bearer(user: string, scope?: string): Promise<string> {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const set = await issueToken({ url, realm: name, clientId }, { user, password: userPassword, scope });
  return `Bearer ${set.access_token}`;
}

const refusal = (promise: Promise<unknown>) => rejectionOf(promise, AuthError);

test("a seeded security token with audit:read lists; the caller carries principal, tenant, roles and scope", async () => {
  const caller = await core.check(
    { authorization: await bearer("security", "audit:read"), tenantId: realm.seed.tenantId },
    "audit.list",
  );
  expect(caller.principalId).toBe("svc-security");
  expect(caller.tenantId).toBe(realm.seed.tenantId);
  expect(caller.roles).toEqual(expect.arrayContaining(["security", "audit-only", "audit-exporter"]));
  expect(caller.scopes).toContain("audit:read");
  expect(core.stats()).toMatchObject({ discoveryFetches: 1, jwksFetches: 1 });
});

test("start() refuses SVC_AUTH_ISSUER with a trailing slash against Keycloak's own discovery document", async () => {
  const slashed = createAuthCore({
    config: parseAuthConfig({ SVC_AUTH_ISSUER: `${realm.issuer}/` }),
    ...captureLogger(),
  });
  const error = await rejectionOf(slashed.start(), AuthConfigError);
  expect(error.subject).toBe("SVC_AUTH_ISSUER");
  expect(error.message).toContain(JSON.stringify(realm.issuer));
  expect(error.message).toContain(JSON.stringify(`${realm.issuer}/`));
});

test("a scope-less security token is refused for audit list and export", async () => {
  const authorization = await bearer("security");
  for (const operation of ["audit.list", "audit.export"] as const) {
    const error = await refusal(core.check({ authorization, tenantId: realm.seed.tenantId }, operation));
    expect(error.code).toBe("AUTH_PERMISSION_DENIED");
  }
});

test("audit:export reaches export", async () => {
  const authorization = await bearer("security", "audit:export");
  const caller = await core.check({ authorization, tenantId: realm.seed.tenantId }, "audit.export");
  expect(caller.scopes).toContain("audit:export");
});

test.each<[string, Operation, boolean]>([
  ["app", "endpoint.grpc", true],
  ["app", "admin.keys", false],
  ["ops", "admin.indexes", true],
  ["ops", "admin.keys", true],
  ["ops", "admin.services", false],
  ["security", "admin.services", true],
])("the seeded %s token on %s: allowed=%p (spec token table)", async (user, operation, allowed) => {
  const request = { authorization: await bearer(user), tenantId: realm.seed.tenantId };
  if (allowed) expect((await core.check(request, operation)).principalId).toBe(`svc-${user}`);
  else expect((await refusal(core.check(request, operation))).code).toBe("AUTH_PERMISSION_DENIED");
});

test("Keycloak's ID token and refresh token are not accepted as access tokens", async () => {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const response = await fetch(`${url}/realms/${name}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "password",
      client_id: clientId,
      username: "app",
      password: userPassword,
      scope: "openid",
    }),
  });
  const body = (await response.json()) as { id_token: string; refresh_token: string };
  expect(body.id_token).toBeString();
  const tenantId = realm.seed.tenantId;
  const idError = await refusal(core.authenticate({ authorization: `Bearer ${body.id_token}`, tenantId }));
  expect(idError.code).toBe("AUTH_WRONG_TOKEN_TYPE");
  // Keycloak signs refresh tokens with the realm's HMAC key (HS512): refused on alg before anything else
  // (a refresh token signed asymmetrically is refused as AUTH_WRONG_TOKEN_TYPE: see verify-access-token.test).
  const refreshError = await refusal(core.authenticate({ authorization: `Bearer ${body.refresh_token}`, tenantId }));
  expect(refreshError.code).toBe("AUTH_ALG_NOT_ALLOWED");
});

test("another tenant in x-tenant-id is refused", async () => {
  const error = await refusal(core.authenticate({ authorization: await bearer("app"), tenantId: "someone-else" }));
  expect(error.code).toBe("AUTH_TENANT_MISMATCH");
});
