import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seedRealm } from "@svc/idp-seed";
import { hangUpListener, randomName, realmUserName, stackEnv } from "@svc/testkit";
import { ADVICE, decodeClaims, issueToken } from "../index.ts";
import { removeRealmRole, seedTestRealm, type TokenTestRealm, tokenError } from "./helpers.ts";

const { idp } = stackEnv();
let seeded: TokenTestRealm | undefined;
let realm = "";
let password = "";
let client: TokenTestRealm["client"];
let admin: TokenTestRealm["admin"];

beforeAll(async () => {
  seeded = await seedTestRealm();
  ({ realm, password, client, admin } = seeded);
}, 60_000);

afterAll(async () => {
  await seeded?.remove();
});

describe("issueToken", () => {
  test.each([
    ["app", ["app"]],
    ["ops", ["ops"]],
    ["security", ["security", "audit-only", "audit-exporter"]],
  ])("issues the %s token with its roles, attributes and the default scope set", async (user, roles) => {
    const set = await issueToken(client, { user, password });
    const claims = decodeClaims(set.access_token);
    expect(claims.preferred_username).toBe(user);
    expect(claims.principal_id).toBe(`svc-${user}`);
    expect(claims.tenant_id).toBe("tenant-test");
    expect((claims.realm_access as { roles: string[] }).roles).toEqual(expect.arrayContaining(roles));
    expect(set.scope?.split(" ")).toEqual(expect.arrayContaining(["openid", "profile", "email"]));
    expect(set.expires_at).toBeGreaterThan(Date.now() / 1000);
  });

  test("extra scopes are appended to the default set", async () => {
    const set = await issueToken(client, { user: "security", password, scope: "audit:read audit:export" });
    expect(set.scope?.split(" ")).toEqual(
      expect.arrayContaining(["openid", "profile", "email", "audit:read", "audit:export"]),
    );
  });

  test("a wrong password fails with IDP_INVALID_CREDENTIALS", async () => {
    const error = await tokenError(issueToken(client, { user: "app", password: randomName("wrong") }));
    expect(error.code).toBe("IDP_INVALID_CREDENTIALS");
    expect(error.idpError?.error).toBe("invalid_grant");
  });

  test("a user with a pending required action fails with IDP_ACCOUNT_NOT_SET_UP and the spec's advice", async () => {
    const username = realmUserName("token-pending");
    const userPassword = randomName("pw");
    await admin.post(`/${realm}/users`, {
      username,
      enabled: true,
      email: `${username}@example.test`,
      emailVerified: true,
      firstName: "Pending",
      lastName: "User",
      requiredActions: ["UPDATE_PASSWORD"],
      credentials: [{ type: "password", value: userPassword, temporary: false }],
    });
    const error = await tokenError(issueToken(client, { user: username, password: userPassword }));
    expect(error.code).toBe("IDP_ACCOUNT_NOT_SET_UP");
    expect(error.advice).toBe(ADVICE.accountNotSetUp);
  });

  test("plain HTTP to a realm that requires HTTPS: IDP_HTTPS_REQUIRED without the forwarded header", async () => {
    await admin.put(`/${realm}`, { sslRequired: "all" });
    try {
      const error = await tokenError(issueToken({ ...client, forwardedProto: false }, { user: "app", password }));
      expect(error.code).toBe("IDP_HTTPS_REQUIRED");
      expect(error.advice).toBe(ADVICE.httpsRequired);
    } finally {
      await admin.put(`/${realm}`, { sslRequired: "external" });
    }
  });

  test("the helper's X-Forwarded-Proto: https is on the wire to a local plain-HTTP IdP, and only when enabled", async () => {
    // Keycloak cannot tell us which headers it received, so a recorder on port 0 stands in for the token endpoint.
    const seen: (string | null)[] = [];
    const recorder = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        seen.push(request.headers.get("x-forwarded-proto"));
        return Response.json(
          { error: "invalid_grant", error_description: "Invalid user credentials" },
          { status: 401 },
        );
      },
    });
    try {
      const local = { ...client, url: `http://127.0.0.1:${recorder.port}` };
      expect((await tokenError(issueToken(local, { user: "app", password }))).code).toBe("IDP_INVALID_CREDENTIALS");
      const off = { ...local, forwardedProto: false };
      expect((await tokenError(issueToken(off, { user: "app", password }))).code).toBe("IDP_INVALID_CREDENTIALS");
      expect(seen).toEqual(["https", null]);
    } finally {
      await recorder.stop(true);
    }
  });

  test("a token issued through the helper carries exactly the issuer that discovery names", async () => {
    const claims = decodeClaims((await issueToken(client, { user: "app", password })).access_token);
    const discovery = await fetch(`${idp.url}/realms/${realm}/.well-known/openid-configuration`);
    const { issuer } = (await discovery.json()) as { issuer: string };
    expect(issuer).toBe(`${idp.url}/realms/${realm}`);
    expect(claims.iss).toBe(issuer);
  });

  test("an unknown client fails with IDP_TOKEN_REQUEST_FAILED carrying the IdP's error", async () => {
    const error = await tokenError(issueToken({ ...client, clientId: randomName("nope") }, { user: "app", password }));
    expect(error.code).toBe("IDP_TOKEN_REQUEST_FAILED");
    expect(error.idpError?.error).toBe("invalid_client");
  });

  test("an IdP that does not answer fails with IDP_UNREACHABLE", async () => {
    const listener = hangUpListener();
    try {
      const { url } = listener;
      const error = await tokenError(issueToken({ ...client, url }, { user: "app", password }));
      expect(error.code).toBe("IDP_UNREACHABLE");
    } finally {
      listener.stop();
    }
  });

  test("a seeded user without its realm role fails with IDP_ROLES_MISSING; re-running the seed fixes it", async () => {
    await removeRealmRole(admin, realm, "ops", "ops");
    const error = await tokenError(issueToken(client, { user: "ops", password }));
    expect(error.code).toBe("IDP_ROLES_MISSING");
    expect(error.advice).toBe(ADVICE.rolesMissing);

    await seedRealm({
      url: idp.url,
      realm,
      clientId: "svc-cli",
      adminUser: idp.adminUser,
      adminPassword: idp.adminPassword,
      userPassword: password,
      tenantId: "tenant-test",
      componentsClientSecret: randomName("components-secret"),
    });
    const set = await issueToken(client, { user: "ops", password });
    expect((decodeClaims(set.access_token).realm_access as { roles: string[] }).roles).toContain("ops");
  }, 30_000);
});
