import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodeClaims, type IdpClientOptions, issueToken, refreshToken } from "../index.ts";
import { admin, seedTestRealm, tokenError, userId } from "./helpers.ts";

let realm = "";
let password = "";
let client: IdpClientOptions;

beforeAll(async () => {
  ({ realm, password, client } = await seedTestRealm());
}, 60_000);

afterAll(async () => {
  if (realm) await admin("DELETE", `/${realm}`);
});

test("an offline_access refresh token renews the access token", async () => {
  const issued = await issueToken(client, { user: "security", password, scope: "offline_access audit:read" });
  expect(issued.refresh_token).toBeDefined();
  expect(decodeClaims(issued.refresh_token ?? "").typ).toBe("Offline");
  const renewed = await refreshToken(client, issued.refresh_token ?? "");
  const claims = decodeClaims(renewed.access_token);
  expect(claims.preferred_username).toBe("security");
  expect(String(claims.scope).split(" ")).toContain("audit:read");
  expect(renewed.refresh_token).toBeDefined();
});

test("a refresh token the IdP does not know fails with IDP_REFRESH_TOKEN_INVALID", async () => {
  const error = await tokenError(refreshToken(client, "not-a-refresh-token"));
  expect(error.code).toBe("IDP_REFRESH_TOKEN_INVALID");
});

test("a renewed token of a seeded user that lost its role fails with IDP_ROLES_MISSING", async () => {
  const issued = await issueToken(client, { user: "app", password, scope: "offline_access" });
  const id = await userId(realm, "app");
  const role = await (await admin("GET", `/${realm}/roles/app`)).json();
  await admin("DELETE", `/${realm}/users/${id}/role-mappings/realm`, [role]);
  const error = await tokenError(refreshToken(client, issued.refresh_token ?? ""));
  expect(error.code).toBe("IDP_ROLES_MISSING");
});
