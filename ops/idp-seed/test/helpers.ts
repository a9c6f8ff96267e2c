import { stackEnv } from "@svc/testkit";
import { AdminClient, type SeedOptions } from "../index.ts";

export const { idp } = stackEnv();

export function seedOptions(
  realm: string,
  userPassword: string,
  componentsClientSecret = "components-secret-test",
): SeedOptions {
  return {
    url: idp.url,
    realm,
    clientId: "svc-cli",
    adminUser: idp.adminUser,
    adminPassword: idp.adminPassword,
    userPassword,
    tenantId: "tenant-test",
    componentsClientSecret,
  };
}

/** The admin REST client of the master realm's bootstrap admin (paths below `/admin/realms`). */
export const admin = new AdminClient({ url: idp.url, adminUser: idp.adminUser, adminPassword: idp.adminPassword });

/** Deletes a realm; one that is already gone is fine. */
export async function deleteRealm(realm: string): Promise<void> {
  await admin.call("DELETE", `/${realm}`, undefined, true);
}

export async function tokenRequest(realm: string, fields: Record<string, string>) {
  const response = await fetch(`${idp.url}/realms/${realm}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export function passwordGrant(realm: string, username: string, password: string, scope = "openid") {
  return tokenRequest(realm, { grant_type: "password", client_id: "svc-cli", username, password, scope });
}

/** The payload of a JWT (claims only; these tests check what the IdP put in, not the signature). */
export function claims(jwt: unknown): Record<string, unknown> {
  const part = String(jwt).split(".")[1] ?? "";
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
}

/** A client-credentials grant of `svc-components` with `secret`. */
export function componentsGrant(realm: string, secret: string) {
  return tokenRequest(realm, { grant_type: "client_credentials", client_id: "svc-components", client_secret: secret });
}
