import type { StackConfig } from "./config.ts";
import { dropsJvmEnv, heapFlags } from "./jvm.ts";
import type { EnvFilter } from "./server-env.ts";

/** Keycloak options (KC_*), the legacy admin variables (KEYCLOAK_*), Quarkus properties and kc.sh's JVM options. */
const PREFIXES = ["KC_", "KEYCLOAK_", "QUARKUS_", "JAVA_OPTS"];
/** What else kc.sh reads: the java binary, JVM option groups, and DEBUG=true, which opens a JDWP port. */
const NAMES = new Set(["JAVA", "JAVA_HOME", "JAVA_ADD_OPENS", "JAVA_LOCALE", "DEBUG", "DEBUG_PORT", "DEBUG_SUSPEND"]);

/**
 * Inherited variables Keycloak must not see: every one that could change it. Names are compared the way Quarkus
 * maps properties to variables (upper case, non-alphanumerics as `_`), so `kc.http-port` goes too.
 */
export const dropsFromKeycloakEnv: EnvFilter = (key) => {
  const normalized = key.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  return dropsJvmEnv(key) || NAMES.has(normalized) || PREFIXES.some((prefix) => normalized.startsWith(prefix));
};

/** Keycloak's own variables: the JDK, a fixed heap, a private temporary directory and the bootstrap admin. */
export function keycloakOwnEnv(
  config: StackConfig["keycloak"],
  javaHome: string,
  tmpDir: string,
): Record<string, string> {
  return {
    JAVA_HOME: javaHome,
    // kc.sh puts JAVA_OPTS_KC_HEAP in place of its default heap (-Xms64m -Xmx512m).
    JAVA_OPTS_KC_HEAP: heapFlags(config.heap_mb).join(" "),
    JAVA_OPTS_APPEND: `-Djava.io.tmpdir=${tmpDir}`,
    KC_BOOTSTRAP_ADMIN_USERNAME: config.admin_user,
    KC_BOOTSTRAP_ADMIN_PASSWORD: config.admin_password,
  };
}
