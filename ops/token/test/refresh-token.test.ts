import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodeClaims, issueToken, refreshToken } from "../index.ts";
import { removeRealmRole, seedTestRealm, type TokenTestRealm, tokenError } from "./helpers.ts";

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

test("an offline_access refresh token renews the access token", async () => {
  const issued = await issueToken(client, { user: "security", password, scope: "offline_access audit:read" });
  expect(issued.refresh_token).toBeDefined();
  expect(decodeClaims(issued.refresh_token ?? "").typ).toBe("Offline");
  const renewed = await refreshToken(client, issued.refresh_token ?? "");
  const claims = decodeClaims(renewed.access_token);
  expect(claims.preferred_username).toBe("security");
  expect(String(claims.scope).split(" ")).toContain("audit:read");
  // A new access token (its own jti, issued no earlier), and a refresh token the IdP sent back: an offline one that
  // is not the one given (refreshToken only falls back to the given one when the IdP sends none).
  expect(renewed.access_token).not.toBe(issued.access_token);
  expect(claims.jti).not.toBe(decodeClaims(issued.access_token).jti);
  expect(Number(claims.iat)).toBeGreaterThanOrEqual(Number(decodeClaims(issued.access_token).iat));
  expect(renewed.refresh_token).not.toBe(issued.refresh_token);
  expect(decodeClaims(renewed.refresh_token ?? "").typ).toBe("Offline");
});

test("an IdP answer without a refresh token keeps the given one", async () => {
  // A stand-in token endpoint on port 0: Keycloak always sends a refresh token back, so it cannot show this case.
  const endpoint = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ access_token: "e30.e30.sig", expires_in: 300 }),
  });
  try {
    const renewed = await refreshToken({ ...client, url: `http://127.0.0.1:${endpoint.port}` }, "given-refresh-token");
    expect(renewed.access_token).toBe("e30.e30.sig");
    expect(renewed.refresh_token).toBe("given-refresh-token");
  } finally {
    await endpoint.stop(true);
  }
});

test("a refresh token the IdP does not know fails with IDP_REFRESH_TOKEN_INVALID", async () => {
  const error = await tokenError(refreshToken(client, "not-a-refresh-token"));
  expect(error.code).toBe("IDP_REFRESH_TOKEN_INVALID");
});

test("a renewed token of a seeded user that lost its role fails with IDP_ROLES_MISSING", async () => {
  const issued = await issueToken(client, { user: "app", password, scope: "offline_access" });
  await removeRealmRole(admin, realm, "app", "app");
  const error = await tokenError(refreshToken(client, issued.refresh_token ?? ""));
  expect(error.code).toBe("IDP_ROLES_MISSING");
});
