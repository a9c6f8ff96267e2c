import type { AdminClient } from "./admin-client.ts";
import { matches } from "./matches.ts";
import { USER_ATTRIBUTES } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

interface ProfileAttribute {
  name: string;
  [key: string]: unknown;
}

interface UserProfileConfig {
  attributes?: ProfileAttribute[];
  [key: string]: unknown;
}

const LABELS: Record<(typeof USER_ATTRIBUTES)[number], string> = {
  principal_id: "Principal id",
  tenant_id: "Tenant id",
};

/**
 * Declares `principal_id` and `tenant_id` in the realm's user profile (Keycloak 24+ drops undeclared attributes);
 * users may see them, only admins edit them.
 */
export async function ensureUserProfile(admin: AdminClient, realm: string, reporter: SeedReporter): Promise<void> {
  const path = `/${encodeURIComponent(realm)}/users/profile`;
  const config = (await admin.get<UserProfileConfig>(path)) ?? {};
  const attributes = [...(config.attributes ?? [])];
  let changed = false;
  for (const name of USER_ATTRIBUTES) {
    const desired: ProfileAttribute = {
      name,
      displayName: LABELS[name],
      multivalued: false,
      permissions: { view: ["admin", "user"], edit: ["admin"] },
    };
    const at = attributes.findIndex((a) => a.name === name);
    if (at < 0) {
      attributes.push({ ...desired, validations: {}, annotations: {} });
      changed = true;
    } else if (!matches(desired, attributes[at])) {
      attributes[at] = { ...attributes[at], ...desired };
      changed = true;
    }
  }
  if (changed) await admin.put(path, { ...config, attributes });
  reporter.record("user-profile", USER_ATTRIBUTES.join(","), changed ? "updated" : "unchanged");
}
