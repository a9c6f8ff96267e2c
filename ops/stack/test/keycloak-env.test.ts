import { expect, test } from "bun:test";
import { createContext } from "../src/context-factory.ts";
import { dropsFromKeycloakEnv } from "../src/keycloak-env.ts";
import { silentProgress } from "../src/progress.ts";
import { serverEnv } from "../src/server-env.ts";
import { keycloak, keycloakServer } from "../src/services/keycloak.ts";

/** The environment `start` would give kc.sh, for a caller whose shell holds `shell`. */
function keycloakChildEnv(shell: Record<string, string>): Record<string, string | undefined> {
  const ctx = createContext({ PATH: "/usr/bin:/bin", HOME: "/home/dev", ...shell }, { progress: silentProgress });
  const spec = keycloakServer(ctx, "/opt/jdk-21");
  return serverEnv(ctx.env, spec.env, spec.dropEnv);
}

test("no KC_*, QUARKUS_*, JAVA_OPTS* or JVM variable of the caller's shell reaches Keycloak", () => {
  const env = keycloakChildEnv({
    KC_HTTP_PORT: "1",
    KC_DB: "postgres",
    kc_hostname: "evil.example",
    "kc.http-port": "2",
    QUARKUS_HTTP_PORT: "3",
    "quarkus.log.level": "TRACE",
    KEYCLOAK_ADMIN: "root",
    JAVA_OPTS: "-Xmx16g",
    JAVA_OPTS_KC_HEAP: "-Xmx16g",
    JAVA_TOOL_OPTIONS: "-Xmx16g",
    JDK_JAVA_OPTIONS: "-Xmx16g",
    _JAVA_OPTIONS: "-Xmx16g",
    JAVA: "/usr/bin/false",
    DEBUG: "true",
    DEBUG_PORT: "8787",
  });
  for (const key of [
    "KC_HTTP_PORT",
    "KC_DB",
    "kc_hostname",
    "kc.http-port",
    "QUARKUS_HTTP_PORT",
    "quarkus.log.level",
    "KEYCLOAK_ADMIN",
    "JAVA_OPTS",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "JAVA",
    "DEBUG",
    "DEBUG_PORT",
  ]) {
    expect({ key, value: env[key] }).toEqual({ key, value: undefined });
  }
  // Ours replace the shell's where the names meet.
  expect(env.JAVA_OPTS_KC_HEAP).toBe("-Xms512m -Xmx512m");
  expect(env.JAVA_HOME).toBe("/opt/jdk-21");
  // The rest of the shell's environment is kept.
  expect(env.PATH).toBe("/usr/bin:/bin");
  expect(env.HOME).toBe("/home/dev");
});

test("the heap is the config's heap_mb (SVC_STACK_KEYCLOAK_HEAP_MB), initial = maximum", () => {
  const env = keycloakChildEnv({ SVC_STACK_KEYCLOAK_HEAP_MB: "768" });
  expect(env.JAVA_OPTS_KC_HEAP).toBe("-Xms768m -Xmx768m");
});

test("the bootstrap admin is the stack config's, not a KC_BOOTSTRAP_* of the shell", () => {
  const env = keycloakChildEnv({ KC_BOOTSTRAP_ADMIN_PASSWORD: "from-shell", IDP_BOOTSTRAP_ADMIN_PASSWORD: "rotated" });
  expect(env.KC_BOOTSTRAP_ADMIN_USERNAME).toBe("idpadmin");
  expect(env.KC_BOOTSTRAP_ADMIN_PASSWORD).toBe("rotated");
});

test("only what could change Keycloak is dropped", () => {
  for (const kept of ["PATH", "HOME", "LANG", "TZ", "SVC_STACK_STATE_DIR", "KCAT_BROKERS", "MY_KC_VALUE"]) {
    expect({ kept, dropped: dropsFromKeycloakEnv(kept) }).toEqual({ kept, dropped: false });
  }
});

test("stack.env hands the components the secret ops/dev seeds: IDP_COMPONENTS_CLIENT_SECRET, else the local default", () => {
  const exported = (shell: Record<string, string>) =>
    keycloak.exports(
      createContext({ PATH: "/usr/bin:/bin", HOME: "/home/dev", ...shell }, { progress: silentProgress }),
    ).SVC_STACK_COMPONENTS_CLIENT_SECRET;
  // the same value as @svc/idp-seed's COMPONENTS_CLIENT_SECRET_DEFAULT
  expect(exported({})).toBe("svc-local-components");
  expect(exported({ IDP_COMPONENTS_CLIENT_SECRET: "rotated" })).toBe("rotated");
});
