import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import { IdpSeedError } from "./errors.ts";
import type { SeedReporter } from "./seed-report.ts";

interface ClientRepresentation {
  id: string;
  clientId: string;
  [key: string]: unknown;
}

/** The client's internal id, or undefined when the realm has no client with that client id. */
export async function findClientId(admin: AdminClient, realm: string, clientId: string): Promise<string | undefined> {
  const found = await admin.getList<ClientRepresentation>(
    `/${encodeURIComponent(realm)}/clients?clientId=${encodeURIComponent(clientId)}`,
  );
  return found.find((c) => c.clientId === clientId)?.id;
}

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
  const base = `/${encodeURIComponent(realm)}/clients`;
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
  const read = async () => {
    const id = await findClientId(admin, realm, clientId);
    return id === undefined ? undefined : admin.get<ClientRepresentation>(`${base}/${id}`);
  };
  const action = await ensure({
    desired,
    read,
    create: () => admin.post(base, desired),
    update: (current) => {
      const { protocolMappers: _mappers, ...rest } = current;
      return admin.put(`${base}/${current.id}`, { ...rest, ...desired });
    },
  });
  reporter.record("client", clientId, action);
  const id = await findClientId(admin, realm, clientId);
  if (id === undefined) {
    throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `client ${clientId} is missing right after it was created`, {
      subject: base,
    });
  }
  return id;
}
