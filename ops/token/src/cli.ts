#!/usr/bin/env bun
import { Command } from "commander";
import { parseTokenConfig } from "./config.ts";
import { TokenError } from "./errors.ts";
import { issueToken } from "./issue-token.ts";
import { refreshTokenFrom } from "./refresh-source.ts";
import { refreshToken } from "./refresh-token.ts";
import { writeTokenFile } from "./token-file.ts";
import type { IdpClientOptions } from "./token-request.ts";
import type { TokenSet } from "./token-set.ts";

interface GlobalFlags {
  url?: string;
  realm?: string;
  clientId?: string;
  forwardedProto: boolean;
}

const program = new Command("token")
  .description(
    "Issue and refresh IdP access tokens (password grant on the CLI client; password from IDP_LOCAL_USER_PASSWORD, " +
      "on the local host by default the local stack's)",
  )
  .option(
    "--url <url>",
    "Keycloak base URL (env IDP_URL; else 127.0.0.1:<IDP_PORT>, the local stack's SVC_STACK_IDP_URL, 127.0.0.1:8082)",
  )
  .option("--realm <realm>", "realm (env IDP_REALM; default svc)")
  .option("--client-id <id>", "client id (env IDP_CLIENT_ID; default svc-cli)")
  .option("--no-forwarded-proto", "never send X-Forwarded-Proto: https (sent by default on plain http to localhost)");

function setup() {
  const flags = program.opts<GlobalFlags>();
  const config = parseTokenConfig({
    ...process.env,
    ...(flags.url && { IDP_URL: flags.url }),
    ...(flags.realm && { IDP_REALM: flags.realm }),
    ...(flags.clientId && { IDP_CLIENT_ID: flags.clientId }),
  });
  const client: IdpClientOptions = {
    url: config.url,
    realm: config.realm,
    clientId: config.clientId,
    forwardedProto: flags.forwardedProto,
  };
  return { config, client };
}

function output(set: TokenSet, out: string | undefined): void {
  if (out === undefined) {
    console.log(set.access_token);
    return;
  }
  writeTokenFile(out, set);
  console.error(`token written to ${out} (mode 0600), expires at ${new Date(set.expires_at * 1000).toISOString()}`);
}

program
  .command("issue")
  .description("issue a token for a user; prints the access token, or writes a JSON token file with --out")
  .requiredOption("--user <name>", "user name (app, ops, security, ...)")
  .option("--scope <scopes>", "extra scopes, appended to 'openid profile email' (e.g. 'audit:read offline_access')")
  .option("--out <file>", "write access_token, refresh_token, expires_at as JSON with mode 0600")
  .action(async (opts: { user: string; scope?: string; out?: string }) => {
    const { config, client } = setup();
    if (config.userPassword === undefined) {
      throw new TokenError(
        "TOKEN_CONFIG_INVALID",
        `IDP_LOCAL_USER_PASSWORD: required to issue a token from an IdP that is not on the local host (${config.url})`,
      );
    }
    const set = await issueToken(client, { user: opts.user, password: config.userPassword, scope: opts.scope });
    output(set, opts.out);
  });

program
  .command("refresh")
  .description(
    "exchange a refresh token for a new access token; the refresh token comes from --from, --stdin or " +
      "SVC_REFRESH_TOKEN (never an argument: ps and /proc would show it)",
  )
  .option("--from <file>", "a token file written by 'issue --out' (owner-only permission)")
  .option("--stdin", "read the refresh token from standard input")
  .option("--out <file>", "write the new token set as JSON with mode 0600 (may be the --from file)")
  .action(async (opts: { from?: string; stdin?: boolean; out?: string }) => {
    const { config, client } = setup();
    const refresh = await refreshTokenFrom({ from: opts.from, stdin: opts.stdin, env: config.refreshToken }, () =>
      Bun.stdin.text(),
    );
    output(await refreshToken(client, refresh), opts.out);
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof TokenError) {
    console.error(`token: ${error.message} [${error.code}]${error.advice ? `\nadvice: ${error.advice}` : ""}`);
  } else {
    console.error(`token: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
}
