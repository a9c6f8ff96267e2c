import { type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";

/**
 * The stack's Keycloak, through a realm of the test's own (seeded like `ops/dev up` seeds `svc`): the endpoint verifies
 * real access tokens. One seeded user per role the tests use; every user's tenant is `tenant`.
 */
export interface TestIssuer {
  issuer: string;
  /** The secret of the realm's `svc-components` client: every component replica calls the others with its token. */
  componentsClientSecret: string;
  tenant: string;
  /** The `principal_id` claim of the user holding `role` (the seed's `svc-<role>`). */
  principalOf(role: TestRole): string;
  /** An access token of the seeded user holding exactly `roles` (one of app, ops, security). */
  token(roles: TestRole[]): Promise<string>;
  stop(): Promise<void>;
}

export type TestRole = "app" | "ops" | "security";

export async function startTestIssuer(tenant = "tenant-a"): Promise<TestIssuer> {
  const realm: SeededRealm = await seedTestRealm("endpoint", tenant);
  const { url, realm: name, clientId, userPassword } = realm.seed;
  return {
    issuer: realm.issuer,
    componentsClientSecret: realm.componentsClientSecret,
    tenant,
    principalOf: (role) => `svc-${role}`,
    async token(roles) {
      const [role, ...more] = roles;
      if (role === undefined || more.length > 0) throw new Error(`one role per seeded user, not [${roles.join(", ")}]`);
      return (await issueToken({ url, realm: name, clientId }, { user: role, password: userPassword })).access_token;
    },
    stop: () => realm.remove(),
  };
}
