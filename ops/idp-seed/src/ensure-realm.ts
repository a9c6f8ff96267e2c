import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import type { SeedReporter } from "./seed-report.ts";

/** The realm itself: enabled, HTTPS required for non-local clients (`sslRequired: external`). */
export async function ensureRealm(admin: AdminClient, realm: string, reporter: SeedReporter): Promise<void> {
  const desired = { realm, enabled: true, sslRequired: "external" };
  const path = `/${encodeURIComponent(realm)}`;
  const action = await ensure({
    desired,
    read: () => admin.get<Record<string, unknown>>(path),
    create: () => admin.post("", desired),
    update: () => admin.put(path, desired),
  });
  reporter.record("realm", realm, action);
}
