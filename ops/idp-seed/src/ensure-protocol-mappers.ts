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

function desiredMappers(clientId: string) {
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
  const audience = {
    name: `${clientId}-audience`,
    protocol: "openid-connect",
    protocolMapper: "oidc-audience-mapper",
    config: {
      "included.client.audience": clientId,
      "access.token.claim": "true",
      "id.token.claim": "false",
      "introspection.token.claim": "true",
    },
  };
  return [...attributeMappers, audience];
}

/** Claims of the client's access tokens: `principal_id`, `tenant_id` from the user, and the client in `aud`. */
export async function ensureProtocolMappers(
  admin: AdminClient,
  realm: string,
  clientInternalId: string,
  clientId: string,
  reporter: SeedReporter,
): Promise<void> {
  const base = `/${encodeURIComponent(realm)}/clients/${clientInternalId}/protocol-mappers/models`;
  for (const desired of desiredMappers(clientId)) {
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
    reporter.record("protocol-mapper", desired.name, action);
  }
}
