import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import { IdpSeedError } from "./errors.ts";
import type { SeedAction, SeedReporter } from "./seed-report.ts";

export interface ClientRepresentation {
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

/** Replaces the client at `path` with `current` plus `fields` (its protocol mappers are left to their own endpoint). */
export function putClient(
  admin: AdminClient,
  path: string,
  current: ClientRepresentation,
  fields: Record<string, unknown>,
): Promise<void> {
  const { protocolMappers: _mappers, ...rest } = current;
  return admin.put(path, { ...rest, ...fields });
}

/**
 * The realm's client `desired.clientId` with `desired`'s fields: created (with `createOnly` too, e.g. its secret)
 * when missing, updated when a field differs. Recorded as a "client" item; returns its internal id and the action.
 */
export async function ensureClientRepresentation(
  admin: AdminClient,
  realm: string,
  desired: { clientId: string } & Record<string, unknown>,
  reporter: SeedReporter,
  createOnly: Record<string, unknown> = {},
): Promise<{ id: string; action: SeedAction }> {
  const { clientId } = desired;
  const base = `/${encodeURIComponent(realm)}/clients`;
  const read = async () => {
    const id = await findClientId(admin, realm, clientId);
    return id === undefined ? undefined : admin.get<ClientRepresentation>(`${base}/${id}`);
  };
  const action = await ensure({
    desired,
    read,
    create: () => admin.post(base, { ...desired, ...createOnly }),
    update: (current) => putClient(admin, `${base}/${current.id}`, current, desired),
  });
  reporter.record("client", clientId, action);
  const id = await findClientId(admin, realm, clientId);
  if (id === undefined) {
    throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `client ${clientId} is missing right after it was created`, {
      subject: base,
    });
  }
  return { id, action };
}
