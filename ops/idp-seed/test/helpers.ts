import { stackEnv } from "@svc/testkit";
import type { SeedOptions } from "../index.ts";

export const { idp } = stackEnv();

export function seedOptions(realm: string, userPassword: string): SeedOptions {
  return {
    url: idp.url,
    realm,
    clientId: "svc-cli",
    adminUser: idp.adminUser,
    adminPassword: idp.adminPassword,
    userPassword,
    tenantId: "tenant-test",
  };
}

/** A token of the master realm's bootstrap admin. */
export async function adminToken(): Promise<string> {
  const grant = await tokenRequest("master", {
    grant_type: "password",
    client_id: "admin-cli",
    username: idp.adminUser,
    password: idp.adminPassword,
  });
  if (grant.status !== 200) throw new Error(`admin login: ${JSON.stringify(grant.body)}`);
  return String(grant.body.access_token);
}

/** An admin REST call below `/admin/realms`; throws on a non-2xx answer. */
export async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${idp.url}/admin/realms${path}`, {
    method,
    headers: { authorization: `Bearer ${await adminToken()}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

export async function deleteRealm(realm: string): Promise<void> {
  const response = await fetch(`${idp.url}/admin/realms/${realm}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${await adminToken()}` },
  });
  if (!response.ok && response.status !== 404) throw new Error(`delete realm ${realm}: ${response.status}`);
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
