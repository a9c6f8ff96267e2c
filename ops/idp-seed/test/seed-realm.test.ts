import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hangUpListener, randomName, realmUserName, rejectionOf } from "@svc/testkit";
import { IdpSeedError, seedRealm } from "../index.ts";
import { admin, claims, componentsGrant, deleteRealm, passwordGrant, seedOptions, tokenRequest } from "./helpers.ts";

const realms: string[] = [];
const password = randomName("pw");
const realm = randomName("seed");

/** Keycloak lists sets (client scopes, roles, mappers) in no fixed order: compare them sorted. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(normalized).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalized(v)]));
  }
  return value;
}

async function snapshot(name: string) {
  const exported = await (
    await admin.call("POST", `/${name}/partial-export?exportClients=true&exportGroupsAndRoles=true`)
  )?.json();
  const users = await admin.getList(`/${name}/users?briefRepresentation=false&max=100`);
  return normalized({ exported, users });
}

const seedError = (promise: Promise<unknown>) => rejectionOf(promise, IdpSeedError);

beforeAll(async () => {
  realms.push(realm);
  const first = await seedRealm(seedOptions(realm, password));
  expect(first.created).toContain(`realm ${realm}`);
  expect(first.created).toEqual(
    expect.arrayContaining([
      "role component",
      "client svc-components",
      "client-secret svc-components",
      "protocol-mapper svc-components/principal_id",
      "protocol-mapper svc-components/tenant_id",
      "protocol-mapper svc-components/svc-cli-audience",
    ]),
  );
  expect(first.updated).toContain("realm-roles service-account-svc-components: component");
}, 60_000);

afterAll(async () => {
  for (const name of realms) await deleteRealm(name);
});

describe("seedRealm", () => {
  test("a second run changes nothing: its report has no change and the realm export and users are equal", async () => {
    const before = await snapshot(realm);
    const second = await seedRealm(seedOptions(realm, password));
    expect(second.created).toEqual([]);
    expect(second.updated).toEqual([]);
    expect(second.changed).toBe(false);
    expect(second.unchanged).toContain("user app");
    expect(second.unchanged).toContain("password security");
    expect(second.unchanged).toEqual(
      expect.arrayContaining([
        "client svc-components",
        "client-secret svc-components",
        "protocol-mapper svc-components/tenant_id",
      ]),
    );
    expect(await snapshot(realm)).toEqual(before);
  }, 30_000);

  test.each([
    ["app", ["app"]],
    ["ops", ["ops"]],
    ["security", ["security", "audit-only", "audit-exporter"]],
  ])(
    "the %s user's access token carries principal_id, tenant_id, its realm roles and svc-cli in aud",
    async (user, roles) => {
      const grant = await passwordGrant(realm, user, password);
      expect(grant.status).toBe(200);
      const token = claims(grant.body.access_token);
      expect(token.principal_id).toBe(`svc-${user}`);
      expect(token.tenant_id).toBe("tenant-test");
      expect((token.realm_access as { roles: string[] }).roles).toEqual(expect.arrayContaining(roles));
      expect([token.aud].flat()).toContain("svc-cli");
      expect(claims(grant.body.id_token).aud).toBe("svc-cli");
    },
  );

  test("audit:read is in the token's scope only when asked for", async () => {
    const asked = await passwordGrant(realm, "security", password, "openid audit:read");
    expect(asked.status).toBe(200);
    expect(String(claims(asked.body.access_token).scope).split(" ")).toContain("audit:read");
    const plain = await passwordGrant(realm, "security", password, "openid profile email");
    expect(plain.status).toBe(200);
    const scopes = String(claims(plain.body.access_token).scope).split(" ");
    expect(scopes).not.toContain("audit:read");
    expect(scopes).not.toContain("audit:export");
  });

  test("offline_access yields an offline refresh token that renews the access token", async () => {
    const grant = await passwordGrant(realm, "ops", password, "openid offline_access");
    expect(grant.status).toBe(200);
    expect(claims(grant.body.refresh_token).typ).toBe("Offline");
    const renewed = await tokenRequest(realm, {
      grant_type: "refresh_token",
      client_id: "svc-cli",
      refresh_token: String(grant.body.refresh_token),
    });
    expect(renewed.status).toBe(200);
    expect(claims(renewed.body.access_token).preferred_username).toBe("ops");
    expect((claims(renewed.body.access_token).realm_access as { roles: string[] }).roles).toContain("ops");
  });

  test("svc-admin is a realm admin of the realm", async () => {
    const grant = await passwordGrant(realm, "svc-admin", password);
    expect(grant.status).toBe(200);
    const access = claims(grant.body.access_token).resource_access as Record<string, { roles: string[] }>;
    expect(access["realm-management"]?.roles).toContain("realm-admin");
  });

  test("drift is repaired: a removed role, a pending required action and a changed client are put back", async () => {
    const [ops] = await admin.getList<{ id: string }>(`/${realm}/users?username=ops&exact=true`);
    if (!ops) throw new Error("no ops user");
    const role = await admin.get(`/${realm}/roles/ops`);
    await admin.delete(`/${realm}/users/${ops.id}/role-mappings/realm`, [role]);
    await admin.put(`/${realm}/users/${ops.id}`, { requiredActions: ["UPDATE_PASSWORD"] });
    const [client] = await admin.getList<{ id: string }>(`/${realm}/clients?clientId=svc-cli`);
    await admin.put(`/${realm}/clients/${client?.id}`, { clientId: "svc-cli", directAccessGrantsEnabled: false });

    const report = await seedRealm(seedOptions(realm, password));
    expect(report.updated).toEqual(expect.arrayContaining(["client svc-cli", "user ops", "realm-roles ops: ops"]));
    expect(report.created).toEqual([]);
    const grant = await passwordGrant(realm, "ops", password);
    expect(grant.status).toBe(200);
    expect((claims(grant.body.access_token).realm_access as { roles: string[] }).roles).toContain("ops");
  }, 30_000);

  test("svc-components: a confidential client-credentials-only client with the component role and fixed claims", async () => {
    const [client] = await admin.getList<Record<string, unknown>>(`/${realm}/clients?clientId=svc-components`);
    expect(client).toMatchObject({
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: false,
      implicitFlowEnabled: false,
    });
    const grant = await componentsGrant(realm, "components-secret-test");
    expect(grant.status).toBe(200);
    const token = claims(grant.body.access_token);
    expect(token.principal_id).toBe("svc-components");
    expect(token.tenant_id).toBe("svc-internal");
    expect([token.aud].flat()).toContain("svc-cli");
    expect((token.realm_access as { roles: string[] }).roles).toContain("component");
    // no other grant: the password grant and a missing secret are refused
    const password = await tokenRequest(realm, {
      grant_type: "password",
      client_id: "svc-components",
      client_secret: "components-secret-test",
      username: "app",
      password: "x",
    });
    expect(password.status).toBeGreaterThanOrEqual(400);
    expect((await componentsGrant(realm, "")).status).toBe(401);
  });

  test("no seeded user has the component role", async () => {
    for (const user of ["app", "ops", "security"]) {
      const grant = await passwordGrant(realm, user, password);
      expect((claims(grant.body.access_token).realm_access as { roles: string[] }).roles).not.toContain("component");
    }
  });

  test("a new components secret is an update: the old secret stops working, the new one works", async () => {
    const rotated = randomName("components-secret");
    const report = await seedRealm(seedOptions(realm, password, rotated));
    expect(report.updated).toEqual(["client-secret svc-components"]);
    expect(report.created).toEqual([]);
    const old = await componentsGrant(realm, "components-secret-test");
    expect(old.status).toBe(401);
    expect((await componentsGrant(realm, rotated)).status).toBe(200);
    // and back, for the tests after this one
    expect((await seedRealm(seedOptions(realm, password))).updated).toEqual(["client-secret svc-components"]);
  }, 30_000);

  test("a run with a new user password rotates it: the old one fails with invalid_grant, the new one works", async () => {
    const own = randomName("seed-rotate");
    realms.push(own);
    await seedRealm(seedOptions(own, password));
    const rotated = randomName("pw2");
    const report = await seedRealm(seedOptions(own, rotated));
    expect(report.updated).toEqual(
      expect.arrayContaining(["password app", "password ops", "password security", "password svc-admin"]),
    );
    for (const user of ["app", "ops", "security"]) {
      const old = await passwordGrant(own, user, password);
      expect(old.status).toBe(401);
      expect(old.body.error).toBe("invalid_grant");
      expect((await passwordGrant(own, user, rotated)).status).toBe(200);
    }
    expect((await seedRealm(seedOptions(own, rotated))).changed).toBe(false);
  }, 60_000);

  test("a wrong admin password fails with IDP_ADMIN_AUTH_FAILED", async () => {
    const error = await seedError(seedRealm({ ...seedOptions(realm, password), adminPassword: randomName("wrong") }));
    expect(error.code).toBe("IDP_ADMIN_AUTH_FAILED");
  });

  test("an IdP that does not answer fails with IDP_UNREACHABLE", async () => {
    const listener = hangUpListener();
    try {
      const { url } = listener;
      const error = await seedError(seedRealm({ ...seedOptions(realm, password), url }));
      expect(error.code).toBe("IDP_UNREACHABLE");
    } finally {
      listener.stop();
    }
  });

  test("an admin without admin rights fails with IDP_ADMIN_REQUEST_FAILED", async () => {
    const username = realmUserName("seed-noadmin");
    const noAdminPassword = randomName("pw");
    await admin.post("/master/users", {
      username,
      enabled: true,
      email: `${username}@example.test`,
      emailVerified: true,
      firstName: "No",
      lastName: "Admin",
      requiredActions: [],
      credentials: [{ type: "password", value: noAdminPassword, temporary: false }],
    });
    const [user] = await admin.getList<{ id: string }>(`/master/users?username=${username}&exact=true`);
    try {
      const error = await seedError(
        seedRealm({
          ...seedOptions(randomName("seed-denied"), password),
          adminUser: username,
          adminPassword: noAdminPassword,
        }),
      );
      expect(error.code).toBe("IDP_ADMIN_REQUEST_FAILED");
      expect(error.status).toBe(403);
    } finally {
      await admin.delete(`/master/users/${user?.id}`);
    }
  }, 30_000);
});
