import { AdminClient } from "./admin-client.ts";
import type { SeedOptions } from "./config.ts";
import { ensureClient } from "./ensure-client.ts";
import { attachClientScopes, ensureClientScopes } from "./ensure-client-scopes.ts";
import { ensureComponentsClient } from "./ensure-components-client.ts";
import { ensureProtocolMappers } from "./ensure-protocol-mappers.ts";
import { ensureRealm } from "./ensure-realm.ts";
import { ensureRoles } from "./ensure-roles.ts";
import { ensureUserProfile } from "./ensure-user-profile.ts";
import { ensureUser } from "./ensure-users.ts";
import { SEED_USERS } from "./seed-plan.ts";
import { type SeedReport, SeedReporter } from "./seed-report.ts";

/**
 * Creates or updates the realm, its roles, user profile, CLI client with its scopes and mappers, the components'
 * client `svc-components` (secret, service-account role, mappers), and the seeded users. Idempotent: a second run with the same options changes nothing and reports every item `unchanged`; a run
 * with a new user password resets the users' passwords.
 */
export async function seedRealm(options: SeedOptions): Promise<SeedReport> {
  const admin = new AdminClient(options);
  await admin.login();
  const reporter = new SeedReporter();
  const { realm, clientId } = options;
  await ensureRealm(admin, realm, reporter);
  await ensureRoles(admin, realm, reporter);
  await ensureUserProfile(admin, realm, reporter);
  await ensureClientScopes(admin, realm, reporter);
  const clientInternalId = await ensureClient(admin, realm, clientId, reporter);
  await attachClientScopes(admin, realm, clientInternalId, reporter);
  await ensureProtocolMappers(admin, realm, clientInternalId, clientId, reporter);
  await ensureComponentsClient(admin, realm, options.componentsClientSecret, clientId, reporter);
  const ctx = {
    admin,
    url: options.url,
    realm,
    clientId,
    password: options.userPassword,
    tenantId: options.tenantId,
    reporter,
  };
  for (const user of SEED_USERS) await ensureUser(ctx, user);
  return reporter.report(realm);
}
