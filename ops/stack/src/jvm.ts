import type { EnvFilter } from "./server-env.ts";

/** A fixed heap: initial = maximum, so a server under load neither resizes nor grows past what the config says. */
export function heapFlags(heapMb: number): string[] {
  return [`-Xms${heapMb}m`, `-Xmx${heapMb}m`];
}

/**
 * Variables the `java` launcher and every JVM read by themselves: a value left in the user's shell would change
 * a Java server's heap or flags behind the stack config's back.
 */
export const dropsJvmEnv: EnvFilter = (key) =>
  key === "JAVA_TOOL_OPTIONS" || key === "JDK_JAVA_OPTIONS" || key === "_JAVA_OPTIONS";
