import type { SeededRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { pino } from "pino";
import { type Kms, parseKmsConfig, startKms } from "../../index.ts";

export const silent = pino({ level: "silent" });

/** The env of a KMS under test: TLS on, ports 0, its own schema, audit file and CA path. */
export function kmsEnv(options: {
  pgUrl: string;
  schema: string;
  issuer: string;
  dir: string;
  passphrase: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    SVC_KMS_PORT: "0",
    SVC_KMS_HOST: "127.0.0.1",
    SVC_KMS_HTTP_PORT: "0",
    SVC_KMS_HTTP_HOST: "127.0.0.1",
    SVC_KMS_PG_URL: options.pgUrl,
    SVC_KMS_PG_SCHEMA: options.schema,
    SVC_KMS_PASSPHRASE: options.passphrase,
    SVC_KMS_BOOTSTRAP: "if-empty",
    SVC_KMS_CA_EXPORT_PATH: `${options.dir}/kms-root-ca.pem`,
    SVC_AUDIT_LOG_FILE: `${options.dir}/kms-audit.jsonl`,
    SVC_AUTH_ISSUER: options.issuer,
    HOME: options.dir,
    ...options.extra,
  };
}

export function startTestKms(env: Record<string, string>): Promise<Kms> {
  return startKms(parseKmsConfig(env), { logger: silent });
}

/** Gives `username` of the test realm the realm role `role` (the seed has no keymanager / pubkey-reader user). */
export async function grantRole(realm: SeededRealm, username: string, role: string): Promise<void> {
  const name = encodeURIComponent(realm.seed.realm);
  const users = await realm.admin.getList<{ id: string; username: string }>(
    `/${name}/users?username=${encodeURIComponent(username)}&exact=true`,
  );
  const user = users.find((u) => u.username === username);
  const found = await realm.admin.get<{ id: string; name: string }>(`/${name}/roles/${encodeURIComponent(role)}`);
  if (!user || !found) throw new Error(`no user ${username} or role ${role} in realm ${realm.seed.realm}`);
  await realm.admin.post(`/${name}/users/${user.id}/role-mappings/realm`, [{ id: found.id, name: found.name }]);
}

/** An access token of `user` of the test realm (with `scope` when given, e.g. `audit:read`). */
export async function accessToken(realm: SeededRealm, user: string, scope?: string): Promise<string> {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  return (await issueToken({ url, realm: name, clientId }, { user, password: userPassword, scope })).access_token;
}
