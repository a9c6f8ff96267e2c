import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import { IdpSeedError } from "./errors.ts";
import { AUDIT_SCOPES } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

interface ClientScope {
  id: string;
  name: string;
  [key: string]: unknown;
}

/** The realm's client scopes by name. */
export async function clientScopesByName(admin: AdminClient, realm: string): Promise<Map<string, ClientScope>> {
  const scopes = await admin.getList<ClientScope>(`/${encodeURIComponent(realm)}/client-scopes`);
  return new Map(scopes.map((s) => [s.name, s]));
}

/** The audit scopes (`audit:read`, `audit:export`): OpenID Connect scopes that show in the token's `scope` claim. */
export async function ensureClientScopes(admin: AdminClient, realm: string, reporter: SeedReporter): Promise<void> {
  const base = `/${encodeURIComponent(realm)}/client-scopes`;
  for (const name of AUDIT_SCOPES) {
    const desired = {
      name,
      description: `svc scope ${name}`,
      protocol: "openid-connect",
      attributes: { "include.in.token.scope": "true", "display.on.consent.screen": "true" },
    };
    const action = await ensure({
      desired,
      read: async () => (await clientScopesByName(admin, realm)).get(name),
      create: () => admin.post(base, desired),
      update: (current) =>
        admin.put(`${base}/${current.id}`, {
          ...current,
          ...desired,
          attributes: { ...(current.attributes as Record<string, string> | undefined), ...desired.attributes },
        }),
    });
    reporter.record("client-scope", name, action);
  }
}

/**
 * Attaches scopes to the client: `roles` (realm roles in `realm_access.roles`) as a default scope; the audit scopes
 * and `offline_access` as optional scopes (moved from default when needed).
 */
export async function attachClientScopes(
  admin: AdminClient,
  realm: string,
  clientInternalId: string,
  reporter: SeedReporter,
): Promise<void> {
  const byName = await clientScopesByName(admin, realm);
  const clientPath = `/${encodeURIComponent(realm)}/clients/${clientInternalId}`;
  const wanted: [string, "default" | "optional"][] = [
    ["roles", "default"],
    ["offline_access", "optional"],
    ...AUDIT_SCOPES.map((s): [string, "optional"] => [s, "optional"]),
  ];
  for (const [name, kind] of wanted) {
    const scope = byName.get(name);
    if (!scope) {
      throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `realm ${realm} has no client scope ${name}`, {
        subject: name,
      });
    }
    const other = kind === "default" ? "optional" : "default";
    const attachedAs = async (k: string) =>
      (await admin.getList<{ id: string }>(`${clientPath}/${k}-client-scopes`)).some((s) => s.id === scope.id);
    if (await attachedAs(kind)) {
      reporter.record(`${kind}-scope`, name, "unchanged");
      continue;
    }
    const moved = await attachedAs(other);
    if (moved) await admin.delete(`${clientPath}/${other}-client-scopes/${scope.id}`);
    await admin.put(`${clientPath}/${kind}-client-scopes/${scope.id}`);
    reporter.record(`${kind}-scope`, name, moved ? "updated" : "created");
  }
}
