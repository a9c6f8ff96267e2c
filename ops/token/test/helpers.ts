import type { AdminClient } from "@svc/idp-seed";
import { rejectionOf, seedTestRealm as seedRealmOfTest } from "@svc/testkit";
import { type IdpClientOptions, TokenError } from "../index.ts";

export interface TokenTestRealm {
  realm: string;
  /** The seeded users' password. */
  password: string;
  client: IdpClientOptions;
  /** Keycloak admin REST client of the master realm's bootstrap admin (paths below `/admin/realms`). */
  admin: AdminClient;
  /** Deletes the realm (afterAll). */
  remove(): Promise<void>;
}

/** Seeds a realm of the test's own (random name, tenant `tenant-test`) with a random user password by default. */
export async function seedTestRealm(userPassword?: string): Promise<TokenTestRealm> {
  const { seed, admin, remove } = await seedRealmOfTest("token", "tenant-test", userPassword);
  return {
    realm: seed.realm,
    password: seed.userPassword,
    client: { url: seed.url, realm: seed.realm, clientId: seed.clientId },
    admin,
    remove,
  };
}

/** The id of a user of the realm. */
export async function userId(admin: AdminClient, realm: string, username: string): Promise<string> {
  const [user] = await admin.getList<{ id: string }>(`/${realm}/users?username=${username}&exact=true`);
  if (!user) throw new Error(`no user ${username} in ${realm}`);
  return user.id;
}

/** Takes a realm role of the realm from a user. */
export async function removeRealmRole(admin: AdminClient, realm: string, username: string, role: string) {
  const id = await userId(admin, realm, username);
  const representation = await admin.get(`/${realm}/roles/${role}`);
  await admin.delete(`/${realm}/users/${id}/role-mappings/realm`, [representation]);
}

/** The TokenError a call fails with (the test fails when it succeeds). */
export const tokenError = (promise: Promise<unknown>) => rejectionOf(promise, TokenError);
