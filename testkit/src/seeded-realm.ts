import { AdminClient, type SeedOptions, seedRealm } from "@svc/idp-seed";
import { randomName } from "./names.ts";
import { stackEnv } from "./stack-env.ts";

/**
 * A realm of one test file, seeded exactly as `ops/dev up` seeds the real one (users app, ops, security; the
 * components' client `svc-components`).
 */
export interface SeededRealm {
  seed: SeedOptions;
  /** The secret of `svc-components` in this realm (random): a component's `SVC_AUTH_CLIENT_SECRET`. */
  componentsClientSecret: string;
  /** `${idp}/realms/<realm>`: what SVC_AUTH_ISSUER names for this realm. */
  issuer: string;
  admin: AdminClient;
  /** Deletes the realm (call it in afterAll). */
  remove(): Promise<void>;
}

/**
 * Seeds a realm of the caller's own (random name) with `userPassword` for the seeded users and
 * `componentsClientSecret` for `svc-components` (both random by default).
 */
export async function seedTestRealm(
  purpose = "realm",
  tenantId = randomName("tenant"),
  userPassword = randomName("pw"),
  componentsClientSecret = randomName("components-secret"),
): Promise<SeededRealm> {
  const { idp } = stackEnv();
  const seed: SeedOptions = {
    url: idp.url,
    realm: randomName(purpose),
    clientId: "svc-cli",
    adminUser: idp.adminUser,
    adminPassword: idp.adminPassword,
    userPassword,
    tenantId,
    componentsClientSecret,
  };
  const admin = new AdminClient(seed);
  await seedRealm(seed);
  return {
    seed,
    componentsClientSecret,
    issuer: `${idp.url}/realms/${seed.realm}`,
    admin,
    remove: () => admin.delete(`/${seed.realm}`),
  };
}
