import type { AdminClient } from "./admin-client.ts";
import { type ClientRepresentation, ensureClientRepresentation, putClient } from "./client-representation.ts";
import { audienceMapper, type DesiredMapper, ensureMappers } from "./ensure-protocol-mappers.ts";
import { IdpSeedError } from "./errors.ts";
import { COMPONENTS_CLIENT } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

interface RoleRepresentation {
  id: string;
  name: string;
}

/** A claim of fixed value in the access token (the service account has no user attributes of its own). */
function hardcodedClaim(claim: string, value: string): DesiredMapper {
  return {
    name: claim,
    protocol: "openid-connect",
    protocolMapper: "oidc-hardcoded-claim-mapper",
    config: {
      "claim.name": claim,
      "claim.value": value,
      "jsonType.label": "String",
      "access.token.claim": "true",
      "id.token.claim": "false",
      "userinfo.token.claim": "false",
      "introspection.token.claim": "true",
    },
  };
}

/** The secret Keycloak holds for the client (`GET /clients/{id}/client-secret`). */
async function currentSecret(admin: AdminClient, path: string): Promise<string | undefined> {
  const credential = await admin.get<{ type?: string; value?: string }>(`${path}/client-secret`);
  return credential?.value;
}

/**
 * The HA components' confidential client `svc-components`: client-credentials grant only, secret `secret`, its
 * service account with realm role `component`, and access tokens with `principal_id` = `svc-components`,
 * `tenant_id` = `svc-internal` and `audience` (the CLI client id, the service's audience) in `aud`. A changed
 * secret is an update; the old one stops working at once.
 */
export async function ensureComponentsClient(
  admin: AdminClient,
  realm: string,
  secret: string,
  audience: string,
  reporter: SeedReporter,
): Promise<void> {
  const { clientId, realmRole, principalId, tenantId } = COMPONENTS_CLIENT;
  const realmPath = `/${encodeURIComponent(realm)}`;
  const base = `${realmPath}/clients`;
  const desired = {
    clientId,
    name: clientId,
    enabled: true,
    protocol: "openid-connect",
    publicClient: false,
    clientAuthenticatorType: "client-secret",
    serviceAccountsEnabled: true,
    standardFlowEnabled: false,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: false,
    fullScopeAllowed: true,
  };
  const { id, action } = await ensureClientRepresentation(admin, realm, desired, reporter, { secret });
  const path = `${base}/${id}`;

  // the secret: set on create; afterwards compared with what Keycloak holds and replaced when it differs
  let secretAction: "created" | "updated" | "unchanged" = "created";
  if (action !== "created") {
    secretAction = "unchanged";
    if ((await currentSecret(admin, path)) !== secret) {
      const current = await admin.get<ClientRepresentation>(path);
      await putClient(admin, path, current ?? { id, clientId }, { ...desired, secret });
      secretAction = "updated";
    }
  }
  if ((await currentSecret(admin, path)) !== secret) {
    throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `client ${clientId} does not hold the secret just set`, {
      subject: `${path}/client-secret`,
    });
  }
  reporter.record("client-secret", clientId, secretAction);

  // the service account's realm role (roles it has beyond this one stay)
  const account = await admin.get<{ id: string; username: string }>(`${path}/service-account-user`);
  if (!account) {
    throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `client ${clientId} has no service account user`, {
      subject: `${path}/service-account-user`,
    });
  }
  const mappingPath = `${realmPath}/users/${account.id}/role-mappings/realm`;
  const has = (await admin.getList<RoleRepresentation>(mappingPath)).some((role) => role.name === realmRole);
  if (!has) {
    const role = await admin.get<RoleRepresentation>(`${realmPath}/roles/${encodeURIComponent(realmRole)}`);
    if (!role) {
      throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `role ${realmRole} not found in realm ${realm}`, {
        subject: realmRole,
      });
    }
    await admin.post(mappingPath, [{ id: role.id, name: role.name }]);
  }
  reporter.record("realm-roles", `${account.username}: ${realmRole}`, has ? "unchanged" : "updated");

  await ensureMappers(
    admin,
    realm,
    id,
    [hardcodedClaim("principal_id", principalId), hardcodedClaim("tenant_id", tenantId), audienceMapper(audience)],
    reporter,
    clientId,
  );
}
