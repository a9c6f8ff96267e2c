import type { AdminClient } from "./admin-client.ts";
import { ensureClientRepresentation } from "./client-representation.ts";
import type { SeedReporter } from "./seed-report.ts";

/**
 * The public CLI client: password grant only (no browser flow), all realm roles in its tokens. Returns its
 * internal id.
 */
export async function ensureClient(
  admin: AdminClient,
  realm: string,
  clientId: string,
  reporter: SeedReporter,
): Promise<string> {
  const desired = {
    clientId,
    name: clientId,
    enabled: true,
    protocol: "openid-connect",
    publicClient: true,
    directAccessGrantsEnabled: true,
    standardFlowEnabled: false,
    implicitFlowEnabled: false,
    serviceAccountsEnabled: false,
    fullScopeAllowed: true,
  };
  const { id } = await ensureClientRepresentation(admin, realm, desired, reporter);
  return id;
}
