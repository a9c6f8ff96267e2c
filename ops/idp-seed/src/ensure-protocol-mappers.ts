import type { AdminClient } from "./admin-client.ts";
import { ensure } from "./ensure.ts";
import { USER_ATTRIBUTES } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

interface ProtocolMapper {
  id: string;
  name: string;
  config?: Record<string, string>;
  [key: string]: unknown;
}

/** A protocol mapper as the seed wants it (matched by `name` on the client). */
export type DesiredMapper = {
  name: string;
  protocol: string;
  protocolMapper: string;
  config: Record<string, string>;
};

/** An audience mapper adding `audience` (a client id) to `aud` of access tokens. */
export function audienceMapper(audience: string): DesiredMapper {
  return {
    name: `${audience}-audience`,
    protocol: "openid-connect",
    protocolMapper: "oidc-audience-mapper",
    config: {
      "included.client.audience": audience,
      "access.token.claim": "true",
      "id.token.claim": "false",
      "introspection.token.claim": "true",
    },
  };
}

function desiredMappers(clientId: string): DesiredMapper[] {
  const attributeMappers = USER_ATTRIBUTES.map((attribute) => ({
    name: attribute,
    protocol: "openid-connect",
    protocolMapper: "oidc-usermodel-attribute-mapper",
    config: {
      "user.attribute": attribute,
      "claim.name": attribute,
      "jsonType.label": "String",
      multivalued: "false",
      "aggregate.attrs": "false",
      "access.token.claim": "true",
      "id.token.claim": "true",
      "userinfo.token.claim": "true",
      "introspection.token.claim": "true",
    },
  }));
  return [...attributeMappers, audienceMapper(clientId)];
}

/** Claims of the client's access tokens: `principal_id`, `tenant_id` from the user, and the client in `aud`. */
export function ensureProtocolMappers(
  admin: AdminClient,
  realm: string,
  clientInternalId: string,
  clientId: string,
  reporter: SeedReporter,
): Promise<void> {
  return ensureMappers(admin, realm, clientInternalId, desiredMappers(clientId), reporter);
}

/**
 * Each mapper of `mappers` on the client, created or updated (by name) as needed; reported under `owner/name` when
 * `owner` is given (two clients may have mappers of the same name).
 */
export async function ensureMappers(
  admin: AdminClient,
  realm: string,
  clientInternalId: string,
  mappers: readonly DesiredMapper[],
  reporter: SeedReporter,
  owner?: string,
): Promise<void> {
  const base = `/${encodeURIComponent(realm)}/clients/${clientInternalId}/protocol-mappers/models`;
  for (const desired of mappers) {
    const action = await ensure({
      desired,
      read: async () => (await admin.getList<ProtocolMapper>(base)).find((m) => m.name === desired.name),
      create: () => admin.post(base, desired),
      update: (current) =>
        admin.put(`${base}/${current.id}`, {
          ...current,
          ...desired,
          config: { ...current.config, ...desired.config },
        }),
    });
    reporter.record("protocol-mapper", owner === undefined ? desired.name : `${owner}/${desired.name}`, action);
  }
}
