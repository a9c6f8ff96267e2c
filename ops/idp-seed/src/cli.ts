#!/usr/bin/env bun
import { Command } from "commander";
import { COMPONENTS_CLIENT_SECRET_DEFAULT } from "./components-client-secret.ts";
import { parseSeedConfig } from "./config.ts";
import { IdpSeedError } from "./errors.ts";
import { LOCAL_USER_PASSWORD_DEFAULT } from "./local-user-password.ts";
import { seedRealm } from "./seed-realm.ts";
import { formatSeedReport } from "./seed-report.ts";

const program = new Command("idp-seed")
  .description(
    "Create or update the IdP realm, roles, CLI client, the components' client svc-components, scopes and seeded " +
      "users (idempotent). Secrets come from IDP_BOOTSTRAP_ADMIN_PASSWORD, IDP_LOCAL_USER_PASSWORD and " +
      "IDP_COMPONENTS_CLIENT_SECRET only, never from flags; without the last two, an IdP on the local host gets the " +
      `local defaults (${LOCAL_USER_PASSWORD_DEFAULT}, ${COMPONENTS_CLIENT_SECRET_DEFAULT}).`,
  )
  .option(
    "--url <url>",
    "Keycloak base URL (env IDP_URL; else 127.0.0.1:<IDP_PORT>, the local stack's SVC_STACK_IDP_URL, 127.0.0.1:8082)",
  )
  .option("--port <port>", "Keycloak port on 127.0.0.1 when no URL is given (env IDP_PORT)")
  .option("--realm <realm>", "realm to seed (env IDP_REALM; default svc)")
  .option("--client-id <id>", "CLI client id (env IDP_CLIENT_ID; default svc-cli)")
  .option("--admin-user <user>", "bootstrap admin of the master realm (env IDP_BOOTSTRAP_ADMIN_USER; default idpadmin)")
  .option("--tenant-id <id>", "tenant_id of the seeded users (env IDP_LOCAL_TENANT_ID; default tenant-local)")
  .action(async (flags: Record<string, string | undefined>) => {
    const options = parseSeedConfig({
      ...process.env,
      ...(flags.url && { IDP_URL: flags.url }),
      ...(flags.port && { IDP_PORT: flags.port }),
      ...(flags.realm && { IDP_REALM: flags.realm }),
      ...(flags.clientId && { IDP_CLIENT_ID: flags.clientId }),
      ...(flags.adminUser && { IDP_BOOTSTRAP_ADMIN_USER: flags.adminUser }),
      ...(flags.tenantId && { IDP_LOCAL_TENANT_ID: flags.tenantId }),
    });
    console.log(formatSeedReport(await seedRealm(options)));
  });

try {
  await program.parseAsync();
} catch (error) {
  const code = error instanceof IdpSeedError ? ` [${error.code}]` : "";
  console.error(`idp-seed: ${error instanceof Error ? error.message : String(error)}${code}`);
  process.exit(1);
}
