import { existsSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { StackContext, StackService } from "../context.ts";
import { ensureJava, MAVEN_DEPENDENCY_PLUGIN, mavenFetch, removeQuietly } from "../installers.ts";
import { dropsFromKeycloakEnv, keycloakOwnEnv } from "../keycloak-env.ts";
import { runTool } from "../run-tool.ts";
import { PROBE_TIMEOUT_MS, type ServerSpec, startServer } from "../start-server.ts";
import { VERSIONS } from "../versions.ts";

const ARTIFACT = `org.keycloak:keycloak-quarkus-dist:${VERSIONS.keycloak}:tar.gz`;
const home = (ctx: StackContext) => join(ctx.cacheDir, `keycloak-${VERSIONS.keycloak}`);
const baseUrl = (ctx: StackContext) => `http://127.0.0.1:${ctx.config.keycloak.port}`;

const stateOf = (ctx: StackContext) => join(ctx.stateDir, "keycloak");

/**
 * The secret of the components' client `svc-components` that `ops/dev up` seeds (ops/idp-seed:
 * `IDP_COMPONENTS_CLIENT_SECRET`, else its local default `COMPONENTS_CLIENT_SECRET_DEFAULT`, the same value as
 * here; this package does not depend on the seed), exported so the stack's components get it.
 */
export const componentsClientSecret = (ctx: StackContext) =>
  ctx.env.IDP_COMPONENTS_CLIENT_SECRET || "svc-local-components";

/**
 * What `start` runs: kc.sh in dev mode with this stack's ports, H2 file and heap, in an environment that no
 * KC_*, QUARKUS_* or JAVA_OPTS* variable of the caller's shell reaches.
 */
export function keycloakServer(ctx: StackContext, javaHome: string): ServerSpec {
  const { port, management_port } = ctx.config.keycloak;
  const state = stateOf(ctx);
  return {
    command: join(home(ctx), "bin", "kc.sh"),
    args: [
      "start-dev",
      "--http-host=127.0.0.1",
      `--http-port=${port}`,
      `--http-management-port=${management_port}`,
      // No proxy-headers: Keycloak would take the scheme of a forwarded https request into the tokens' issuer
      // (https://127.0.0.1/realms/...), which then differs from the issuer discovery names over plain HTTP.
      // Loopback callers are local under sslRequired=external, so plain HTTP works here without the header.
      // Each stack keeps its own realm data; the distribution in the cache stays shared and unchanged.
      `--db-url=jdbc:h2:file:${join(state, "h2", "keycloakdb")};NON_KEYWORDS=VALUE`,
    ],
    env: keycloakOwnEnv(ctx.config.keycloak, javaHome, join(state, "tmp")),
    dropEnv: dropsFromKeycloakEnv,
  };
}

export const keycloak: StackService = {
  name: "keycloak",
  after: [],
  readiness: { timeoutMs: 240_000, intervalMs: 1_000 },
  ports: (ctx) => [ctx.config.keycloak.port, ctx.config.keycloak.management_port],

  async install(ctx, task) {
    await ensureJava(task, 21, ctx.env);
    if (existsSync(join(home(ctx), "bin", "kc.sh"))) {
      task.done(`Keycloak ${VERSIONS.keycloak} (cached)`);
      return;
    }
    const downloads = join(ctx.cacheDir, "downloads");
    const archive = join(downloads, `keycloak-quarkus-dist-${VERSIONS.keycloak}.tar.gz`);
    if (!existsSync(archive)) {
      task.update(0, "fetching the server distribution from Maven Central");
      await mavenFetch(ctx.env, task, "keycloak", [
        `${MAVEN_DEPENDENCY_PLUGIN}:copy`,
        `-Dartifact=${ARTIFACT}`,
        `-DoutputDirectory=${downloads}`,
      ]);
    }
    task.update(1, "unpacking");
    const staging = `${home(ctx)}.partial`;
    removeQuietly(staging);
    mkdirSync(staging, { recursive: true });
    await runTool("keycloak", "tar", ["-xzf", archive, "-C", staging, "--strip-components=1"], { env: ctx.env });
    renameSync(staging, home(ctx));
    task.done(`Keycloak ${VERSIONS.keycloak}`);
  },

  async start(ctx, task) {
    const javaHome = await ensureJava(task, 21, ctx.env);
    mkdirSync(join(stateOf(ctx), "tmp"), { recursive: true });
    task.update(1, "starting (dev mode; the first start builds the server)");
    const daemon = await startServer(ctx, this, keycloakServer(ctx, javaHome));
    task.done(baseUrl(ctx));
    return daemon;
  },

  async probe(ctx) {
    const url = `${baseUrl(ctx)}/realms/master/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).catch(() => undefined);
    return response?.status === 200;
  },

  address: (ctx) => baseUrl(ctx),

  exports(ctx) {
    const { admin_user, admin_password } = ctx.config.keycloak;
    return {
      SVC_STACK_IDP_URL: baseUrl(ctx),
      SVC_STACK_IDP_ADMIN_USER: admin_user,
      SVC_STACK_IDP_ADMIN_PASSWORD: admin_password,
      SVC_STACK_COMPONENTS_CLIENT_SECRET: componentsClientSecret(ctx),
    };
  },
};
