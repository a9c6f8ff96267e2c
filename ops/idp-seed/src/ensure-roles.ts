import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import { SEED_ROLES } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

/** The realm roles of the spec's list. */
export async function ensureRoles(admin: AdminClient, realm: string, reporter: SeedReporter): Promise<void> {
  const base = `/${encodeURIComponent(realm)}/roles`;
  for (const name of SEED_ROLES) {
    const desired = { name, description: `svc role ${name}`, composite: false, clientRole: false };
    const path = `${base}/${encodeURIComponent(name)}`;
    const action = await ensure({
      desired,
      read: () => admin.get<Record<string, unknown>>(path),
      create: () => admin.post(base, { name, description: desired.description }),
      update: (current) => admin.put(path, { ...current, description: desired.description }),
    });
    reporter.record("role", name, action);
  }
}
