import { rejectionOf, seedTestRealm as seedRealmOfTest, stackEnv } from "@svc/testkit";
import { type IdpClientOptions, TokenError } from "../index.ts";

export const { idp } = stackEnv();

/** Seeds a realm of the test's own (random name) with a random user password. */
export async function seedTestRealm(): Promise<{ realm: string; password: string; client: IdpClientOptions }> {
  const { seed } = await seedRealmOfTest("token", "tenant-test");
  return {
    realm: seed.realm,
    password: seed.userPassword,
    client: { url: seed.url, realm: seed.realm, clientId: seed.clientId },
  };
}

async function adminToken(): Promise<string> {
  const response = await fetch(`${idp.url}/realms/master/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "password",
      client_id: "admin-cli",
      username: idp.adminUser,
      password: idp.adminPassword,
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`admin login: ${response.status}`);
  return body.access_token;
}

/** An admin REST call below `/admin/realms`; throws on a non-2xx answer other than an allowed 404. */
export async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${idp.url}/admin/realms${path}`, {
    method,
    headers: { authorization: `Bearer ${await adminToken()}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok && !(method === "DELETE" && response.status === 404)) {
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }
  return response;
}

export async function userId(realm: string, username: string): Promise<string> {
  const [user] = (await (await admin("GET", `/${realm}/users?username=${username}&exact=true`)).json()) as {
    id: string;
  }[];
  if (!user) throw new Error(`no user ${username} in ${realm}`);
  return user.id;
}

/** The TokenError a call fails with (the test fails when it succeeds). */
export const tokenError = (promise: Promise<unknown>) => rejectionOf(promise, TokenError);
