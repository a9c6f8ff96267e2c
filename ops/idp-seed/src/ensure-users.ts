import type { AdminClient } from "./admin-client.ts";
import { findClientId } from "./client-representation.ts";
import { ensure } from "./ensure.ts";
import { IdpSeedError } from "./errors.ts";
import { passwordWorks } from "./password-works.ts";
import type { SeedUser } from "./seed-plan.ts";
import type { SeedReporter } from "./seed-report.ts";

interface UserRepresentation {
  id: string;
  username: string;
  attributes?: Record<string, string[]>;
  [key: string]: unknown;
}

interface RoleRepresentation {
  id: string;
  name: string;
}

export interface UserSeedContext {
  admin: AdminClient;
  url: string;
  realm: string;
  clientId: string;
  password: string;
  tenantId: string;
  reporter: SeedReporter;
}

async function findUser(ctx: UserSeedContext, username: string): Promise<UserRepresentation | undefined> {
  const found = await ctx.admin.getList<UserRepresentation>(
    `/${encodeURIComponent(ctx.realm)}/users?username=${encodeURIComponent(username)}&exact=true&briefRepresentation=false`,
  );
  return found.find((u) => u.username === username);
}

/** Adds the roles the user lacks (roles it has beyond these stay). */
async function ensureRoleMappings(
  ctx: UserSeedContext,
  user: UserRepresentation,
  kind: string,
  mappingPath: string,
  rolesPath: string,
  names: readonly string[],
): Promise<void> {
  if (names.length === 0) return;
  const has = new Set((await ctx.admin.getList<RoleRepresentation>(mappingPath)).map((r) => r.name));
  const missing = names.filter((n) => !has.has(n));
  if (missing.length > 0) {
    const roles: RoleRepresentation[] = [];
    for (const name of missing) {
      const role = await ctx.admin.get<RoleRepresentation>(`${rolesPath}/${encodeURIComponent(name)}`);
      if (!role) {
        throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `role ${name} not found in realm ${ctx.realm}`, {
          subject: name,
        });
      }
      roles.push({ id: role.id, name: role.name });
    }
    await ctx.admin.post(mappingPath, roles);
  }
  ctx.reporter.record(kind, `${user.username}: ${names.join(",")}`, missing.length > 0 ? "updated" : "unchanged");
}

/**
 * One seeded user: profile fields, `principal_id` / `tenant_id`, no pending required action, the shared password
 * (reset only when the IdP no longer accepts it) and its roles.
 */
export async function ensureUser(ctx: UserSeedContext, spec: SeedUser): Promise<void> {
  const realmPath = `/${encodeURIComponent(ctx.realm)}`;
  const desired = {
    username: spec.username,
    enabled: true,
    email: `${spec.username}@svc.local`,
    emailVerified: true,
    firstName: spec.firstName,
    lastName: spec.lastName,
    requiredActions: [],
    attributes: { principal_id: [spec.principalId], tenant_id: [ctx.tenantId] },
  };
  const action = await ensure({
    desired,
    read: () => findUser(ctx, spec.username),
    create: () =>
      ctx.admin.post(`${realmPath}/users`, {
        ...desired,
        credentials: [{ type: "password", value: ctx.password, temporary: false }],
      }),
    update: (current) =>
      ctx.admin.put(`${realmPath}/users/${current.id}`, {
        ...current,
        ...desired,
        attributes: { ...current.attributes, ...desired.attributes },
      }),
  });
  ctx.reporter.record("user", spec.username, action);
  const user = await findUser(ctx, spec.username);
  if (!user) {
    throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `user ${spec.username} is missing right after it was created`, {
      subject: spec.username,
    });
  }

  if (action === "created") {
    ctx.reporter.record("password", spec.username, "created");
  } else {
    const works = await passwordWorks({ ...ctx, username: spec.username, password: ctx.password });
    if (!works) {
      await ctx.admin.put(`${realmPath}/users/${user.id}/reset-password`, {
        type: "password",
        value: ctx.password,
        temporary: false,
      });
    }
    ctx.reporter.record("password", spec.username, works ? "unchanged" : "updated");
  }

  const userPath = `${realmPath}/users/${user.id}/role-mappings`;
  await ensureRoleMappings(ctx, user, "realm-roles", `${userPath}/realm`, `${realmPath}/roles`, spec.realmRoles);
  for (const [clientId, role] of spec.clientRoles) {
    const id = await findClientId(ctx.admin, ctx.realm, clientId);
    if (id === undefined) {
      throw new IdpSeedError("IDP_ADMIN_REQUEST_FAILED", `client ${clientId} not found in realm ${ctx.realm}`, {
        subject: clientId,
      });
    }
    await ensureRoleMappings(
      ctx,
      user,
      "client-roles",
      `${userPath}/clients/${id}`,
      `${realmPath}/clients/${id}/roles`,
      [role],
    );
  }
}
