import { AdminClient, type SeedOptions, seedRealm } from "@svc/idp-seed";
import { randomName } from "./names.ts";
import { stackEnv } from "./stack-env.ts";

/** A realm of one test file, seeded exactly as `ops/dev up` seeds the real one (users app, ops, security). */
export interface SeededRealm {
  seed: SeedOptions;
  /** `${idp}/realms/<realm>`: what SVC_AUTH_ISSUER names for this realm. */
  issuer: string;
  admin: AdminClient;
  /** Deletes the realm (call it in afterAll). */
  remove(): Promise<void>;
}

/** Seeds a realm of the caller's own (random name) with `userPassword` for the seeded users (random by default). */
export async function seedTestRealm(
  purpose = "realm",
  tenantId = randomName("tenant"),
  userPassword = randomName("pw"),
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
  };
  const admin = new AdminClient(seed);
  await seedRealm(seed);
  return {
    seed,
    issuer: `${idp.url}/realms/${seed.realm}`,
    admin,
    remove: () => admin.delete(`/${seed.realm}`),
  };
}
